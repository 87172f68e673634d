#include "platform/object/object_reader.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fathom::object {

void BackOff(int attempt, const ReadPolicy& policy, absl::Duration& backoff) {
  if (attempt < 4) return;
  // Give the writer time to finish: sleeping beats spinning when nodes share cores.
  if (policy.sleep) {
    policy.sleep(backoff);
  } else {
    absl::SleepFor(backoff);
  }
  backoff = std::min(backoff * 2, policy.max_backoff);
}

namespace {

// Waits for the single completion of the read just posted.
absl::Status AwaitOne(fabric::Worker& worker, absl::Duration timeout) {
  fabric::Completion done;
  for (uint32_t spins = 0;; ++spins) {
    if (worker.Poll(absl::Span<fabric::Completion>(&done, 1)) == 1) return done.status;
    if (spins == 1024) {
      // Slow path: not a shared-memory copy. Sleep on the fabric, bounded by the timeout.
      const absl::Time deadline = absl::Now() + timeout;
      while (worker.Poll(absl::Span<fabric::Completion>(&done, 1)) == 0) {
        if (absl::Now() >= deadline) {
          return absl::DeadlineExceededError("object read not completed within the operation timeout");
        }
        worker.Wait(absl::Milliseconds(1));
      }
      return done.status;
    }
  }
}

}  // namespace

absl::StatusOr<std::span<const std::byte>> ReadRemoteObject(fabric::Worker& worker, fabric::Endpoint& endpoint,
                                                            fabric::RemoteRegion region, const ObjectRef& ref,
                                                            std::vector<std::byte>& buffer,
                                                            const ReadPolicy& policy, ReadStats* stats) {
  return ReadWithRetries(ref, buffer, policy, stats, [&](std::span<std::byte> copy) -> absl::Status {
    if (absl::Status s = endpoint.PostRead(region, ref.address.offset, copy.data(), copy.size(), 0); !s.ok()) {
      return s;
    }
    if (absl::Status s = endpoint.Flush(); !s.ok()) return s;
    return AwaitOne(worker, policy.operation_timeout);
  });
}

}  // namespace fathom::object
