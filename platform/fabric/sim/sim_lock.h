// The network mutex's lock, and the virtual clock read under it, both visible to ThreadSanitizer.
#ifndef FATHOM_PLATFORM_FABRIC_SIM_SIM_LOCK_H_
#define FATHOM_PLATFORM_FABRIC_SIM_SIM_LOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "platform/base/clock.h"
#include "platform/base/mutex.h"

namespace fathom::fabric::sim::internal {

// The network mutex's lock: fathom::MutexLock, which ThreadSanitizer can see (platform/base/mutex.h).
using CoreLock = ::fathom::MutexLock;

// The network's virtual time as a Clock. The time itself is a SimulatedClock that only the scheduler moves,
// under the network mutex; readers take that mutex too, so readers on other threads are visibly ordered.
class VirtualClock final : public Clock {
 public:
  VirtualClock(absl::Mutex* mu, const SimulatedClock* time) : mu_(mu), time_(time) {}
  absl::Time Now() const override {
    CoreLock lock(mu_);
    return time_->Now();
  }

 private:
  absl::Mutex* const mu_;
  const SimulatedClock* const time_;
};

}  // namespace fathom::fabric::sim::internal

#endif  // FATHOM_PLATFORM_FABRIC_SIM_SIM_LOCK_H_
