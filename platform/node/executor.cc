#include "platform/node/executor.h"

#include "absl/time/clock.h"

namespace fathom::node {

bool WaitUntil(Executor* executor, const Clock& clock, const std::function<bool()>& done, absl::Duration timeout,
               absl::Duration poll) {
  if (executor != nullptr) return executor->RunUntil(done, timeout);
  const absl::Time deadline = clock.Now() + timeout;
  while (!done()) {
    if (clock.Now() >= deadline) return false;
    absl::SleepFor(poll);
  }
  return true;
}

}  // namespace fathom::node
