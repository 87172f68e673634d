// Reading objects: copy, check, retry. One rule for every reader (object_codec.h); this file adds the
// retry loop around local copies and one-sided fabric reads.
//
//   ReadStats stats;
//   std::vector<std::byte> buffer;
//   ASSIGN_OR_RETURN(std::span<const std::byte> payload,
//                    ReadRemoteObject(worker, endpoint, remote_region, ref, buffer, {}, &stats));
#ifndef FATHOM_PLATFORM_OBJECT_OBJECT_READER_H_
#define FATHOM_PLATFORM_OBJECT_OBJECT_READER_H_

#include <cstdint>
#include <algorithm>
#include <functional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/fabric/fabric.h"
#include "platform/object/object_codec.h"
#include "platform/object/object_layout.h"

namespace fathom::object {

struct ReadPolicy {
  // Copies tried before giving up with Unavailable (a torn or locked copy is retried).
  int max_attempts = 1000;
  // Attempts after the first few back off by sleeping, doubling from 1 µs up to this.
  absl::Duration max_backoff = absl::Microseconds(100);
  // How long one fabric read may take.
  absl::Duration operation_timeout = absl::Seconds(10);
  // Injected so tests need not sleep; absl::SleepFor when empty.
  std::function<void(absl::Duration)> sleep;
};

struct ReadStats {
  uint64_t reads = 0;           // objects returned
  uint64_t copies = 0;          // copies taken (reads + retries)
  uint64_t torn_retries = 0;    // copies rejected by the checksum
  uint64_t locked_retries = 0;  // copies taken while a writer held the lock
};

// Sleeps before retry `attempt` (none for the first few); `backoff` carries the doubling delay.
void BackOff(int attempt, const ReadPolicy& policy, absl::Duration& backoff);

// The retry loop around `copy_once(std::span<std::byte>) -> absl::Status`, which fills the span
// (ref.capacity bytes of `buffer`) with one copy. A template so the data path makes no allocation.
template <typename CopyOnce>
absl::StatusOr<std::span<const std::byte>> ReadWithRetries(const ObjectRef& ref, std::vector<std::byte>& buffer,
                                                           const ReadPolicy& policy, ReadStats* stats,
                                                           CopyOnce&& copy_once) {
  if (ref.capacity < kHeaderBytes || ref.capacity % 8 != 0) {
    return absl::InvalidArgumentError("object reference with a capacity that is not a slot size");
  }
  if (buffer.size() < ref.capacity) buffer.resize(ref.capacity);
  std::span<std::byte> copy(buffer.data(), ref.capacity);
  Verdict last = Verdict::kTorn;
  absl::Duration backoff = absl::Microseconds(1);
  for (int attempt = 0; attempt < policy.max_attempts; ++attempt) {
    BackOff(attempt, policy, backoff);
    if (absl::Status s = copy_once(copy); !s.ok()) return s;
    if (stats != nullptr) ++stats->copies;
    ObjectCheck check = CheckObjectCopy(copy, ref);
    last = check.verdict;
    if (check.verdict == Verdict::kValid) {
      if (stats != nullptr) ++stats->reads;
      return check.payload;
    }
    if (!IsRetryable(check.verdict)) return VerdictStatus(check.verdict, ref);
    if (stats != nullptr) ++(check.verdict == Verdict::kTorn ? stats->torn_retries : stats->locked_retries);
  }
  return VerdictStatus(last, ref);
}

// Reads `ref` with one-sided reads of ref.capacity bytes on `endpoint`, where `region` is the import of
// ref.address.region. Other completions that arrive on `worker` meanwhile are an error (this helper
// owns the worker while it runs).
absl::StatusOr<std::span<const std::byte>> ReadRemoteObject(fabric::Worker& worker, fabric::Endpoint& endpoint,
                                                            fabric::RemoteRegion region, const ObjectRef& ref,
                                                            std::vector<std::byte>& buffer,
                                                            const ReadPolicy& policy, ReadStats* stats);

}  // namespace fathom::object

#endif  // FATHOM_PLATFORM_OBJECT_OBJECT_READER_H_
