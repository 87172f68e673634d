// Locking that ThreadSanitizer understands. Use fathom::MutexLock (not absl::MutexLock) for every
// absl::Mutex, and fathom::WaitWithDeadline for condition variables.
//
// Why: Debian's Abseil is not built with -fsanitize=thread, so TSan cannot see an absl::Mutex lock or unlock
// and reports every access it correctly guards as a data race. These helpers tell TSan what the lock does
// (acquire on lock, release on unlock); they compile to nothing in other builds.
//
//   absl::Mutex mu_;
//   int count_ ABSL_GUARDED_BY(mu_);
//   void Add() { fathom::MutexLock lock(&mu_); ++count_; }
#ifndef FATHOM_PLATFORM_BASE_MUTEX_H_
#define FATHOM_PLATFORM_BASE_MUTEX_H_

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fathom {

inline void TsanAcquire([[maybe_unused]] void* lock) {
#if defined(__SANITIZE_THREAD__)
  __tsan_acquire(lock);
#endif
}

inline void TsanRelease([[maybe_unused]] void* lock) {
#if defined(__SANITIZE_THREAD__)
  __tsan_release(lock);
#endif
}

// absl::MutexLock, visible to ThreadSanitizer.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(absl::Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
    TsanAcquire(mu_);
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() {
    TsanRelease(mu_);
    mu_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  absl::Mutex* const mu_;
};

// absl::ReaderMutexLock, visible to ThreadSanitizer (as an acquire and a release, like MutexLock).
class ABSL_SCOPED_LOCKABLE ReaderMutexLock {
 public:
  explicit ReaderMutexLock(absl::Mutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->ReaderLock();
    TsanAcquire(mu_);
  }
  ~ReaderMutexLock() ABSL_UNLOCK_FUNCTION() {
    TsanRelease(mu_);
    mu_->ReaderUnlock();
  }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  absl::Mutex* const mu_;
};

// cv->WaitWithDeadline(mu, deadline), with the unlock and relock it does inside made visible to TSan.
// Returns true if the deadline passed. REQUIRES: mu held.
inline bool WaitWithDeadline(absl::CondVar* cv, absl::Mutex* mu, absl::Time deadline)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
  TsanRelease(mu);
  const bool timed_out = cv->WaitWithDeadline(mu, deadline);
  TsanAcquire(mu);
  return timed_out;
}

// absl::Notification, visible to TSan (absl's is as invisible as its Mutex): one thread Notify()s, others
// wait; everything written before Notify() is visible after the wait returns.
class Notification {
 public:
  void Notify() {
    MutexLock lock(&mu_);
    notified_ = true;
    cv_.SignalAll();
  }
  bool HasBeenNotified() {
    MutexLock lock(&mu_);
    return notified_;
  }
  void WaitForNotification() { WaitForNotificationWithDeadline(absl::InfiniteFuture()); }
  bool WaitForNotificationWithTimeout(absl::Duration timeout) {
    return WaitForNotificationWithDeadline(absl::Now() + timeout);
  }
  // True if notified, false if the deadline passed first.
  bool WaitForNotificationWithDeadline(absl::Time deadline) {
    MutexLock lock(&mu_);
    while (!notified_) {
      if (WaitWithDeadline(&cv_, &mu_, deadline)) return notified_;
    }
    return true;
  }

 private:
  absl::Mutex mu_;
  absl::CondVar cv_;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fathom

#endif  // FATHOM_PLATFORM_BASE_MUTEX_H_
