#include "platform/object/async_object_reader.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/object/object_codec.h"

namespace fathom::object {
namespace {
constexpr uint64_t kSerialMask = (uint64_t{1} << 56) - 1;
uint64_t Context(uint64_t serial) { return kObjectContextTag << 56 | (serial & kSerialMask); }
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
  const uint64_t serial = next_serial_++ & kSerialMask;
  PendingRead& read = reads_[serial];
  read.endpoint = &endpoint;
  read.region = region;
  read.ref = ref;
  read.done = std::move(done);
  read.fail_if_locked = fail_if_locked;
  // A copy buffer of an earlier read: a fresh one per read cost an allocation and a memset of the object.
  if (!spare_buffers_.empty()) {
    read.buffer = std::move(spare_buffers_.back());
    spare_buffers_.pop_back();
  }
  read.buffer.resize(ref.capacity);
  if (absl::Status s = Post(serial, read); !s.ok()) {
    reads_.erase(serial);
    return s;
  }
  return absl::OkStatus();
}

absl::Status AsyncObjectReader::Post(uint64_t serial, PendingRead& read) {
  ++read.attempts;
  read.posted = true;
  if (absl::Status s = read.endpoint->PostRead(read.region, read.ref.address.offset, read.buffer.data(),
                                               read.buffer.size(), Context(serial));
      !s.ok()) {
    return s;
  }
  return read.endpoint->Flush();
}

void AsyncObjectReader::Finish(uint64_t serial, absl::StatusOr<VersionedObject> result) {
  auto it = reads_.find(serial);
  if (it == reads_.end()) return;
  // Keep the buffer alive through the callback, then forget the read.
  PendingRead read = std::move(it->second);
  reads_.erase(it);
  if (result.ok()) ++stats_.reads;
  read.done(std::move(result));
  if (spare_buffers_.size() < kSpareBuffers) spare_buffers_.push_back(std::move(read.buffer));
}

bool AsyncObjectReader::OnCompletion(const fabric::Completion& completion) {
  if (!IsObjectContext(completion.context)) return false;
  const uint64_t serial = completion.context & kSerialMask;
  auto it = reads_.find(serial);
  if (it == reads_.end()) return true;  // abandoned
  PendingRead& read = it->second;
  read.posted = false;
  if (read.endpoint == nullptr) {
    Finish(serial, absl::CancelledError("the connection to the object's node was closed"));
    return true;
  }
  if (!completion.status.ok()) {
    Finish(serial, completion.status);
    return true;
  }
  ++stats_.copies;
  ObjectCheck check = CheckObjectCopy(read.buffer, read.ref);
  if (check.verdict == Verdict::kValid) {
    // The payload points into read.buffer, which Finish keeps alive during the callback.
    Finish(serial, VersionedObject{check.header, check.payload});
    return true;
  }
  if (check.verdict == Verdict::kLocked && read.fail_if_locked) {
    Finish(serial, absl::AbortedError(absl::StrCat("object ", read.ref.address.ToString(), " is locked")));
    return true;
  }
  if (!IsRetryable(check.verdict) || read.attempts >= policy_.max_attempts) {
    Finish(serial, VerdictStatus(check.verdict, read.ref));
    return true;
  }
  ++(check.verdict == Verdict::kTorn ? stats_.torn_retries : stats_.locked_retries);
  if (read.attempts < 4) {
    if (absl::Status s = Post(serial, read); !s.ok()) Finish(serial, s);
    return true;
  }
  // Back off without blocking the loop: Poll re-posts it later.
  read.retry_at = clock_->Now() + read.backoff;
  read.backoff = std::min(read.backoff * 2, policy_.max_backoff);
  waiting_.push_back(serial);
  return true;
}

size_t AsyncObjectReader::Poll() {
  if (waiting_.empty()) return 0;
  const absl::Time now = clock_->Now();
  size_t posted = 0;
  std::vector<uint64_t> still_waiting;
  for (uint64_t serial : waiting_) {
    auto it = reads_.find(serial);
    if (it == reads_.end()) continue;
    if (it->second.endpoint == nullptr) {
      Finish(serial, absl::CancelledError("the connection to the object's node was closed"));
      continue;
    }
    if (it->second.retry_at > now) {
      still_waiting.push_back(serial);
      continue;
    }
    if (absl::Status s = Post(serial, it->second); !s.ok()) {
      Finish(serial, s);
    } else {
      ++posted;
    }
  }
  waiting_ = std::move(still_waiting);
  return posted;
}

void AsyncObjectReader::Forget(const fabric::Endpoint& endpoint) {
  for (auto& [serial, read] : reads_) {
    if (read.endpoint == &endpoint) read.endpoint = nullptr;
  }
}

}  // namespace fathom::object
