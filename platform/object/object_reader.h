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

// The retry loop around `copy_once`, which fills `buffer` (ref.capacity bytes) with one copy.
absl::StatusOr<std::span<const std::byte>> ReadWithRetries(
    const ObjectRef& ref, std::vector<std::byte>& buffer, const ReadPolicy& policy, ReadStats* stats,
    const std::function<absl::Status(std::span<std::byte>)>& copy_once);

// Reads `ref` with one-sided reads of ref.capacity bytes on `endpoint`, where `region` is the import of
// ref.address.region. Other completions that arrive on `worker` meanwhile are an error (this helper
// owns the worker while it runs).
absl::StatusOr<std::span<const std::byte>> ReadRemoteObject(fabric::Worker& worker, fabric::Endpoint& endpoint,
                                                            fabric::RemoteRegion region, const ObjectRef& ref,
                                                            std::vector<std::byte>& buffer,
                                                            const ReadPolicy& policy, ReadStats* stats);

}  // namespace fathom::object

#endif  // FATHOM_PLATFORM_OBJECT_OBJECT_READER_H_
