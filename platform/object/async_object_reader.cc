#include "platform/object/async_object_reader.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/object/object_codec.h"

namespace fathom::object {
namespace {
constexpr uint64_t kIdMask = (uint64_t{1} << 56) - 1;
uint64_t Context(uint64_t id) { return kObjectContextTag << 56 | (id & kIdMask); }
// Transient: the connection was replaced (or its node removed), and the next one serves the read.
absl::Status ConnectionClosed() {
  return absl::UnavailableError("the connection to the object's node was closed (replaced or removed): read again");
}
}  // namespace

absl::Status AsyncObjectReader::Read(fabric::Endpoint& endpoint, fabric::RemoteRegion region, const ObjectRef& ref,
                                     ObjectCallback done) {
  return ReadVersioned(endpoint, region, ref, [done = std::move(done)](absl::StatusOr<VersionedObject> object) mutable {
    done(object.ok() ? absl::StatusOr<std::span<const std::byte>>(object->payload) : object.status());
  });
}

absl::Status AsyncObjectReader::ReadVersioned(fabric::Endpoint& endpoint, fabric::RemoteRegion region,
                                              const ObjectRef& ref, VersionedObjectCallback done,
                                              bool fail_if_locked) {
  if (ref.capacity < kHeaderBytes || ref.capacity % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("object reference with capacity ", ref.capacity));
  }
  absl::StatusOr<uint64_t> id = AcquireSlot();
  if (!id.ok()) return id.status();
  const uint32_t slot = static_cast<uint32_t>(*id >> 32);
  PendingRead& read = slots_[slot];
  read.endpoint = &endpoint;
  read.region = region;
  read.ref = ref;
  read.done = std::move(done);
  read.fail_if_locked = fail_if_locked;
  read.attempts = 0;
  read.backoff = absl::Microseconds(1);
  read.retry_at = absl::InfinitePast();
  read.posted = false;
  // The buffer of the slot's earlier read: a fresh one per read cost an allocation and a memset.
  if (read.buffer.size() < ref.capacity) read.buffer.resize(ref.capacity);
  if (absl::Status s = Post(*id, read); !s.ok()) {
    Release(slot, read);
    return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> AsyncObjectReader::AcquireSlot() {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (slots_.size() >= (size_t{1} << 24)) return absl::ResourceExhaustedError("too many object reads in flight");
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  PendingRead& read = slots_[slot];
  read.live = true;
  ++in_flight_;
  return Id(slot, ++read.generation);
}

absl::Status AsyncObjectReader::Call(fabric::Endpoint& endpoint, uint32_t handler, absl::Span<const std::byte> argument,
                                     size_t capacity, ObjectCallback done) {
  absl::StatusOr<uint64_t> id = AcquireSlot();
  if (!id.ok()) return id.status();
  const uint32_t slot = static_cast<uint32_t>(*id >> 32);
  PendingRead& read = slots_[slot];
  read.endpoint = &endpoint;
  read.call = true;
  read.call_done = std::move(done);
  read.attempts = 1;
  read.posted = true;
  if (read.buffer.size() < capacity) read.buffer.resize(capacity);
  absl::Status s = endpoint.PostCall(handler, argument, read.buffer.data(), capacity, Context(*id));
  if (s.ok()) s = endpoint.Flush();
  if (!s.ok()) {
    read.call = false;
    read.call_done = nullptr;
    Release(slot, read);
  }
  return s;
}

AsyncObjectReader::PendingRead* AsyncObjectReader::Find(uint64_t id) {
  const uint64_t slot = id >> 32;
  if (slot >= slots_.size()) return nullptr;
  PendingRead& read = slots_[slot];
  if (!read.live || read.generation != static_cast<uint32_t>(id)) return nullptr;
  return &read;
}

void AsyncObjectReader::Release(uint32_t slot, PendingRead& read) {
  read.live = false;
  read.done = nullptr;
  read.endpoint = nullptr;
  --in_flight_;
  free_slots_.push_back(slot);
}

absl::Status AsyncObjectReader::Post(uint64_t id, PendingRead& read) {
  ++read.attempts;
  read.posted = true;
  // Only the object's capacity: the slot's buffer may be larger (kept from an earlier read).
  if (absl::Status s = read.endpoint->PostRead(read.region, read.ref.address.offset, read.buffer.data(),
                                               read.ref.capacity, Context(id));
      !s.ok()) {
    return s;
  }
  return read.endpoint->Flush();
}

void AsyncObjectReader::Finish(uint64_t id, absl::StatusOr<VersionedObject> result) {
  PendingRead* read = Find(id);
  if (read == nullptr) return;
  VersionedObjectCallback done = std::move(read->done);
  read->live = false;
  read->endpoint = nullptr;
  --in_flight_;
  if (result.ok()) ++stats_.reads;
  // The payload points into the slot's buffer: the slot is free for new reads only after the callback
  // (which may start some).
  done(std::move(result));
  free_slots_.push_back(static_cast<uint32_t>(id >> 32));
}

void AsyncObjectReader::FinishCall(uint64_t id, absl::StatusOr<std::span<const std::byte>> result) {
  PendingRead* read = Find(id);
  if (read == nullptr) return;
  ObjectCallback done = std::move(read->call_done);
  read->call = false;
  read->live = false;
  read->endpoint = nullptr;
  --in_flight_;
  done(std::move(result));  // the reply is in the slot's buffer: the slot is reused only after this
  free_slots_.push_back(static_cast<uint32_t>(id >> 32));
}

bool AsyncObjectReader::OnCompletion(const fabric::Completion& completion) {
  if (!IsObjectContext(completion.context)) return false;
  const uint64_t id = completion.context & kIdMask;
  PendingRead* found = Find(id);
  if (found == nullptr) return true;  // abandoned
  PendingRead& read = *found;
  read.posted = false;
  if (read.call) {
    if (read.endpoint == nullptr) {
      FinishCall(id, ConnectionClosed());
    } else if (!completion.status.ok()) {
      FinishCall(id, completion.status);
    } else {
      FinishCall(id, std::span<const std::byte>(read.buffer.data(), std::min<size_t>(completion.bytes, read.buffer.size())));
    }
    return true;
  }
  if (read.endpoint == nullptr) {
    Finish(id, ConnectionClosed());
    return true;
  }
  if (!completion.status.ok()) {
    Finish(id, completion.status);
    return true;
  }
  ++stats_.copies;
  ObjectCheck check = CheckObjectCopy(std::span<const std::byte>(read.buffer.data(), read.ref.capacity), read.ref);
  if (check.verdict == Verdict::kValid) {
    // The payload points into the read's buffer, which Finish keeps alive during the callback.
    Finish(id, VersionedObject{check.header, check.payload});
    return true;
  }
  if (check.verdict == Verdict::kLocked && read.fail_if_locked) {
    Finish(id, absl::AbortedError(absl::StrCat("object ", read.ref.address.ToString(), " is locked")));
    return true;
  }
  if (!IsRetryable(check.verdict) || read.attempts >= policy_.max_attempts) {
    Finish(id, VerdictStatus(check.verdict, read.ref));
    return true;
  }
  ++(check.verdict == Verdict::kTorn ? stats_.torn_retries : stats_.locked_retries);
  read.last_verdict = check.verdict;
  if (read.attempts < 4) {
    if (absl::Status s = Post(id, read); !s.ok()) Finish(id, s);
    return true;
  }
  // Back off without blocking the loop: Poll re-posts it later.
  read.retry_at = clock_->Now() + read.backoff;
  read.backoff = std::min(read.backoff * 2, policy_.max_backoff);
  waiting_.push_back(id);
  return true;
}

std::string AsyncObjectReader::DescribeWaiting() const {
  std::string out;
  constexpr size_t kListed = 4;
  for (size_t i = 0; i < waiting_.size() && i < kListed; ++i) {
    const uint64_t id = waiting_[i];
    const uint32_t slot = static_cast<uint32_t>(id >> 32);
    if (slot >= slots_.size()) continue;
    const PendingRead& read = slots_[slot];
    absl::StrAppend(&out, i == 0 ? "" : ", ", read.ref.address.ToString(), " (", read.attempts, " attempts, ",
                    read.last_verdict == Verdict::kTorn ? "torn" : "locked", ")");
  }
  return out;
}

size_t AsyncObjectReader::Poll() {
  if (waiting_.empty()) return 0;
  const absl::Time now = clock_->Now();
  size_t posted = 0;
  std::vector<uint64_t> still_waiting;
  for (uint64_t id : waiting_) {
    PendingRead* read = Find(id);
    if (read == nullptr) continue;
    if (read->endpoint == nullptr) {
      Finish(id, ConnectionClosed());
      continue;
    }
    if (read->retry_at > now) {
      still_waiting.push_back(id);
      continue;
    }
    if (absl::Status s = Post(id, *read); !s.ok()) {
      Finish(id, s);
    } else {
      ++posted;
    }
  }
  waiting_ = std::move(still_waiting);
  return posted;
}

void AsyncObjectReader::Forget(const fabric::Endpoint& endpoint) {
  for (PendingRead& read : slots_) {
    if (read.live && read.endpoint == &endpoint) read.endpoint = nullptr;
  }
}

}  // namespace fathom::object
