// Retrying an operation of the public API through a failure the cluster recovers from (a member died and
// its regions move to their backups, a connection is being made again): FathomAsyncBackend's rule, for
// the blocking calls of fathom::Table.
#ifndef FATHOM_FATHOM_RETRY_H_
#define FATHOM_FATHOM_RETRY_H_

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fathom {

// A failure the cluster recovers from by itself: a member unreachable or removed, a region not served
// yet, a call that timed out.
inline bool IsTransient(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status);
}

inline const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& result) {
  return result.status();
}

// Runs `attempt` until it ends in anything `retry` does not accept (by default: anything but a transient
// failure), or `deadline` has passed since its first failure (then its last failure is returned). Between
// tries it sleeps a doubling backoff (1 ms .. 100 ms), jittered by `jitter_seed` (a caller's key hash, say)
// so that clients do not retry in step.
template <typename Attempt, typename Retry = bool (*)(const absl::Status&)>
auto RetryTransient(absl::Duration deadline, uint64_t jitter_seed, Attempt attempt, Retry retry = &IsTransient)
    -> decltype(attempt()) {
  auto result = attempt();
  if (!retry(StatusOf(result)) || deadline <= absl::ZeroDuration()) return result;
  const absl::Time give_up = absl::Now() + deadline;
  absl::Duration backoff = absl::Milliseconds(1);
  uint64_t state = jitter_seed | 1;
  while (retry(StatusOf(result)) && absl::Now() < give_up) {
    state ^= state << 13;  // xorshift64: a jitter in [0.5, 1.5) of the backoff
    state ^= state >> 7;
    state ^= state << 17;
    const double jitter = 0.5 + static_cast<double>(state % 1024) / 1024.0;
    absl::SleepFor(std::min(backoff * jitter, give_up - absl::Now()));
    backoff = std::min(backoff * 2, absl::Milliseconds(100));
    result = attempt();
  }
  return result;
}

}  // namespace fathom

#endif  // FATHOM_FATHOM_RETRY_H_
