// The life of one operation: accepted by Post, scheduled by Flush, delivered (or lost, dropped, refused),
// executed whole or as a torn copy, completed; and how failures end the other operations of an endpoint.
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "platform/fabric/racy_copy.h"
#include "platform/fabric/sim/sim_core.h"

namespace fathom::fabric::sim::internal {

namespace {



std::string Name(OpType type) { return std::string(OpTypeName(type)); }

uint64_t* Word(std::byte* target) { return reinterpret_cast<uint64_t*>(target); }

// Executes a whole operation on `target` (the region's byte at the operation's offset) as one event.
void ExecuteWhole(const Operation& op, std::byte* target) {
  switch (op.type) {
    case OpType::kRead:
      RacyCopy(static_cast<std::byte*>(op.destination), target, op.length, /*to_is_shared=*/false);
      break;
    case OpType::kWrite:
      RacyCopy(target, static_cast<const std::byte*>(op.source), op.length, /*to_is_shared=*/true);
      break;
    case OpType::kCompareSwap: {
      // __atomic builtins: the owner's threads may touch the word concurrently (against the contract, but
      // that must still not be undefined behaviour in a test).
      uint64_t old = op.expected;
      __atomic_compare_exchange_n(Word(target), &old, op.operand, /*weak=*/false, __ATOMIC_SEQ_CST,
                                  __ATOMIC_SEQ_CST);
      *op.old_value = old;
      break;
    }
    case OpType::kFetchAdd:
      *op.old_value = __atomic_fetch_add(Word(target), op.operand, __ATOMIC_SEQ_CST);
      break;
  }
}

}  // namespace

absl::Status SimCore::Post(const Operation& op) {
  CoreLock lock(&mu_);
  auto endpoint_it = endpoints_.find(op.endpoint);
  if (endpoint_it == endpoints_.end()) return absl::CancelledError("endpoint closed");
  EndpointState& endpoint = endpoint_it->second;
  if (!endpoint.health.ok()) return endpoint.health;
  WorkerState* worker = FindWorker(endpoint.worker);
  if (worker == nullptr) return absl::CancelledError("worker destroyed");
  if (worker->outstanding >= options_.fabric.max_outstanding) {
    return absl::ResourceExhaustedError(absl::StrCat("more than ", options_.fabric.max_outstanding,
                                                     " outstanding operations on this worker"));
  }
  const uint64_t id = next_op_++;
  Operation& accepted = ops_.emplace(id, op).first->second;
  accepted.deadline = now_ + options_.fabric.operation_timeout;
  accepted.flushed = false;
  endpoint.unflushed.push_back(id);
  ++worker->outstanding;
  ++worker->unflushed;
  ++stats_.operations;
  return absl::OkStatus();
}

bool SimCore::IsTorn(const Operation& op) const {
  return options_.torn_copies && (op.type == OpType::kRead || op.type == OpType::kWrite);
}

absl::Status SimCore::Flush(uint64_t endpoint_id) {
  CoreLock lock(&mu_);
  auto it = endpoints_.find(endpoint_id);
  if (it == endpoints_.end()) return absl::CancelledError("endpoint closed");
  EndpointState& endpoint = it->second;
  if (!endpoint.health.ok()) return endpoint.health;
  if (endpoint.unflushed.empty()) return absl::OkStatus();
  for (uint64_t id : endpoint.unflushed) {
    Operation& op = ops_.at(id);
    op.flushed = true;
    endpoint.in_flight.insert(id);
    // FIFO per endpoint: never delivered before the previous operation has finished executing.
    const absl::Time arrival = std::max(now_ + absl::Nanoseconds(static_cast<int64_t>(UniformInt(
                                                   absl::ToInt64Nanoseconds(options_.min_latency),
                                                   absl::ToInt64Nanoseconds(options_.max_latency)))),
                                        endpoint.busy_until);
    // A torn copy's chunks run within torn_window_ after arrival; the next operation waits for all of them.
    const absl::Time finished = IsTorn(op) ? arrival + torn_window_ : arrival;
    endpoint.busy_until = finished;
    if (finished > op.deadline) {
      Schedule(op.deadline, EventKind::kDeadline, id);
    } else {
      Schedule(arrival, EventKind::kDeliver, id);
    }
  }
  if (WorkerState* worker = FindWorker(endpoint.worker)) worker->unflushed -= endpoint.unflushed.size();
  endpoint.unflushed.clear();
  work_cv_.SignalAll();  // a waiter blocked with nothing to run now has events
  return absl::OkStatus();
}

void SimCore::Deliver(uint64_t id) {
  auto it = ops_.find(id);
  if (it == ops_.end()) return;  // already ended by a failure of its endpoint
  Operation& op = it->second;
  EndpointState& endpoint = endpoints_.at(op.endpoint);
  // Queued behind a lost operation, as on a reliable connection; ends when that one's deadline fails the
  // endpoint.
  if (endpoint.stalled) return;
  if (absl::Status up = NodesUp(endpoint); !up.ok()) {
    FailEndpoint(op.endpoint, up, up);
    return;
  }
  if (Partitioned(endpoint.node, endpoint.peer)) {
    endpoint.stalled = true;
    Schedule(op.deadline, EventKind::kDeadline, id);
    return;
  }
  if (Chance(drop_probability_)) {
    ++stats_.dropped;
    Complete(id, absl::UnavailableError(absl::StrCat("dropped ", Name(op.type), " from node ", endpoint.node,
                                                     " to node ", endpoint.peer, " (drop_probability)")));
    return;
  }
  RegionEntry* region = FindRegion(op.region);
  if (region == nullptr) {
    Complete(id, absl::NotFoundError(absl::StrCat("region ", op.region.region, " (generation ",
                                                  op.region.generation, ") of node ", op.region.node,
                                                  " is not registered")));
    return;
  }
  // The endpoint checked against the descriptor's length; the descriptor may lie, the region does not.
  if (op.offset > region->size || op.length > region->size - op.offset) {
    Complete(id, absl::OutOfRangeError(absl::StrCat("bytes [", op.offset, ", +", op.length,
                                                    ") outside region of ", region->size, " bytes")));
    return;
  }
  if (IsTorn(op)) {
    StartTornCopy(id, op);
    return;
  }
  ExecuteWhole(op, region->data + op.offset);
  Complete(id, absl::OkStatus());
}

void SimCore::StartTornCopy(uint64_t id, Operation& op) {
  std::vector<std::pair<uint64_t, uint64_t>> chunks;  // (offset within the operation, length)
  for (uint64_t at = 0; at < op.length;) {
    // A chunk ends on an 8-byte boundary of the region (or at the operation's end): aligned words move whole.
    const uint64_t wanted_end = op.offset + at + UniformInt(1, options_.max_torn_chunk);
    const uint64_t end = std::min<uint64_t>(op.length, (wanted_end + 7) / 8 * 8 - op.offset);
    chunks.emplace_back(at, end - at);
    at = end;
  }
  // Random order (Fisher-Yates on our generator), and random moments within the window.
  for (size_t i = chunks.size(); i > 1; --i) std::swap(chunks[i - 1], chunks[UniformInt(0, i - 1)]);
  op.chunks_left = chunks.size();
  for (const auto& [at, n] : chunks) {
    Schedule(now_ + RandomDurationBelow(torn_window_), EventKind::kCopyChunk, id, at, n);
  }
}

void SimCore::CopyChunk(const Event& event) {
  auto it = ops_.find(event.op);
  if (it == ops_.end()) return;
  Operation& op = it->second;
  RegionEntry* region = FindRegion(op.region);
  if (region == nullptr) {  // deregistered in the middle of the copy
    Complete(event.op, absl::NotFoundError(absl::StrCat("region ", op.region.region, " of node ",
                                                        op.region.node, " deregistered during a copy")));
    return;
  }
  std::byte* target = region->data + op.offset + event.chunk_offset;
  if (op.type == OpType::kRead) {
    RacyCopy(static_cast<std::byte*>(op.destination) + event.chunk_offset, target, event.chunk_length,
             /*to_is_shared=*/false);
  } else {
    RacyCopy(target, static_cast<const std::byte*>(op.source) + event.chunk_offset, event.chunk_length,
             /*to_is_shared=*/true);
  }
  ++stats_.torn_chunks;
  if (--op.chunks_left == 0) Complete(event.op, absl::OkStatus());
}

void SimCore::TimeOut(uint64_t id) {
  const Operation& op = ops_.at(id);
  const uint64_t endpoint_id = op.endpoint;
  const EndpointState& endpoint = endpoints_.at(endpoint_id);
  absl::Status expired = absl::DeadlineExceededError(
      absl::StrCat(Name(op.type), " from node ", endpoint.node, " to node ", endpoint.peer,
                   " not completed within ", absl::FormatDuration(options_.fabric.operation_timeout),
                   op.flushed ? "" : " (never flushed)"));
  ++stats_.timed_out;
  Complete(id, expired);
  FailEndpoint(endpoint_id, expired,
               absl::UnavailableError(absl::StrCat("endpoint failed: ", expired.message())));
}

void SimCore::ExpireUnflushed(const WorkerState& worker) {
  if (worker.unflushed == 0) return;
  for (uint64_t endpoint_id : worker.endpoints) {
    const EndpointState& endpoint = endpoints_.at(endpoint_id);
    // The oldest unflushed operation has the earliest deadline; its timeout ends the rest.
    if (!endpoint.unflushed.empty() && ops_.at(endpoint.unflushed.front()).deadline <= now_) {
      TimeOut(endpoint.unflushed.front());
    }
  }
}

void SimCore::Complete(uint64_t id, absl::Status status) {
  auto it = ops_.find(id);
  const Operation& op = it->second;
  RecordHistory(op, status);
  EndpointState& endpoint = endpoints_.at(op.endpoint);
  WorkerState* worker = FindWorker(endpoint.worker);
  if (op.flushed) {
    endpoint.in_flight.erase(id);
  } else {
    endpoint.unflushed.erase(std::find(endpoint.unflushed.begin(), endpoint.unflushed.end(), id));
    if (worker != nullptr) --worker->unflushed;
  }
  if (worker != nullptr) worker->ready.push_back(Completion{op.context, op.type, std::move(status)});
  ops_.erase(it);
  work_cv_.SignalAll();
}

void SimCore::FailEndpoint(uint64_t endpoint_id, const absl::Status& reason, const absl::Status& pending_status) {
  EndpointState& endpoint = endpoints_.at(endpoint_id);
  if (!endpoint.health.ok()) return;
  endpoint.health = reason;
  endpoint.stalled = false;
  // Post order: every in-flight operation was posted before every unflushed one.
  while (!endpoint.in_flight.empty()) Complete(*endpoint.in_flight.begin(), pending_status);
  while (!endpoint.unflushed.empty()) Complete(endpoint.unflushed.front(), pending_status);
}

void SimCore::RecordHistory(const Operation& op, const absl::Status& status) {
  struct {
    int64_t time_ns;
    uint64_t endpoint, offset, length, expected, operand, old_value;
    uint32_t node, region;
    uint8_t type, code;
  } record;
  std::memset(&record, 0, sizeof(record));  // its padding is hashed too
  record.time_ns = absl::ToUnixNanos(now_);
  record.endpoint = op.endpoint;
  record.offset = op.offset;
  record.length = op.length;
  record.expected = op.expected;
  record.operand = op.operand;
  record.old_value = op.old_value != nullptr && status.ok() ? *op.old_value : 0;
  record.node = op.region.node;
  record.region = op.region.region;
  record.type = static_cast<uint8_t>(op.type);
  record.code = static_cast<uint8_t>(status.code());
  uint64_t digest = XXH64(&record, sizeof(record), stats_.history_digest);
  const void* bytes = op.type == OpType::kWrite ? op.source : op.type == OpType::kRead ? op.destination : nullptr;
  if (bytes != nullptr && status.ok()) digest = XXH64(bytes, op.length, digest);
  stats_.history_digest = digest;
  ++stats_.completed;
  if (options_.trace_history) {
    fprintf(stderr, "sim op %llu t=%lld ep=%llu %s node=%u region=%u off=%llu len=%llu %s digest=%016llx\n",
            static_cast<unsigned long long>(stats_.completed), static_cast<long long>(record.time_ns),
            static_cast<unsigned long long>(op.endpoint), OpTypeName(op.type), op.region.node, op.region.region,
            static_cast<unsigned long long>(op.offset), static_cast<unsigned long long>(op.length),
            absl::StatusCodeToString(status.code()).c_str(), static_cast<unsigned long long>(digest));
  }
}

}  // namespace fathom::fabric::sim::internal
