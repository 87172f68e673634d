// Injected time, so that timeouts are testable and deterministic.
//
//   RealClock clock;                        // production
//   SimulatedClock sim; sim.Advance(...);   // tests
#ifndef FATHOM_PLATFORM_BASE_CLOCK_H_
#define FATHOM_PLATFORM_BASE_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "platform/base/mutex.h"

namespace fathom {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  // A process-wide real clock.
  static Clock* Real();
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

// Time moves only when the test says so. Thread-safe.
class SimulatedClock final : public Clock {
 public:
  explicit SimulatedClock(absl::Time start = absl::UnixEpoch()) : now_(start) {}
  absl::Time Now() const override {
    MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    MutexLock lock(&mu_);
    now_ += d;
  }
  void AdvanceTo(absl::Time t) {
    MutexLock lock(&mu_);
    if (t > now_) now_ = t;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

inline Clock* Clock::Real() {
  static RealClock* clock = new RealClock();
  return clock;
}

}  // namespace fathom

#endif  // FATHOM_PLATFORM_BASE_CLOCK_H_
