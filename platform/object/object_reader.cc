#include "platform/object/object_reader.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fathom::object {

absl::StatusOr<std::span<const std::byte>> ReadWithRetries(
    const ObjectRef& ref, std::vector<std::byte>& buffer, const ReadPolicy& policy, ReadStats* stats,
    const std::function<absl::Status(std::span<std::byte>)>& copy_once) {
  if (ref.capacity < kHeaderBytes || ref.capacity % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("object reference with capacity ", ref.capacity));
  }
  if (buffer.size() < ref.capacity) buffer.resize(ref.capacity);
  std::span<std::byte> copy(buffer.data(), ref.capacity);
  Verdict last = Verdict::kTorn;
  absl::Duration backoff = absl::Microseconds(1);
  for (int attempt = 0; attempt < policy.max_attempts; ++attempt) {
    if (attempt >= 4) {
      // Give the writer time to finish: sleeping beats spinning when nodes share cores.
      if (policy.sleep) {
        policy.sleep(backoff);
      } else {
        absl::SleepFor(backoff);
      }
      backoff = std::min(backoff * 2, policy.max_backoff);
    }
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

absl::StatusOr<std::span<const std::byte>> ReadRemoteObject(fabric::Worker& worker, fabric::Endpoint& endpoint,
                                                            fabric::RemoteRegion region, const ObjectRef& ref,
                                                            std::vector<std::byte>& buffer,
                                                            const ReadPolicy& policy, ReadStats* stats) {
  return ReadWithRetries(ref, buffer, policy, stats, [&](std::span<std::byte> copy) -> absl::Status {
    if (absl::Status s = endpoint.PostRead(region, ref.address.offset, copy.data(), copy.size(), 0); !s.ok()) {
      return s;
    }
    if (absl::Status s = endpoint.Flush(); !s.ok()) return s;
    std::vector<fabric::Completion> done;
    if (absl::Status s = fabric::WaitForCompletions(worker, 1, done, policy.operation_timeout); !s.ok()) return s;
    return done[0].status;
  });
}

}  // namespace fathom::object
