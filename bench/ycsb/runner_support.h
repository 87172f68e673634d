// What the synchronous and the asynchronous drivers (runner.h, async_runner.h) share: the operation budget,
// per-client seeds, and the progress line on stderr.
#ifndef FATHOM_BENCH_YCSB_RUNNER_SUPPORT_H_
#define FATHOM_BENCH_YCSB_RUNNER_SUPPORT_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/time/time.h"

namespace fathom::ycsb {

// The generator seed of client `client` in a phase: SplitMix64 of (seed, phase, client), well separated.
uint64_t ClientSeed(uint64_t seed, bool load, int client);

// Hands out operation slots from a fixed budget to all clients.
class Budget {
 public:
  // At most `total` operations, and none that would start after `deadline` (YCSB's maxexecutiontime).
  explicit Budget(int64_t total, absl::Time deadline = absl::InfiniteFuture())
      : remaining_(total), deadline_(deadline) {}
  bool Take() { return TakeUpTo(1) == 1; }
  // Up to `n` slots at once: fewer when fewer are left, 0 when none are or the deadline passed.
  int64_t TakeUpTo(int64_t n) {
    if (n <= 0 || Expired()) return 0;
    const int64_t before = remaining_.fetch_sub(n, std::memory_order_relaxed);
    return before <= 0 ? 0 : std::min(n, before);
  }
  bool Expired() const { return deadline_ != absl::InfiniteFuture() && absl::Now() >= deadline_; }

 private:
  // A line of its own: every client thread writes it, and nothing else should move with it.
  alignas(64) std::atomic<int64_t> remaining_;
  const absl::Time deadline_;
};

// One thread's share of a Budget and of the count of operations done, taken from and added to the
// shared ones `chunk` at a time: threads that each run hundreds of thousands of short operations a second
// would otherwise pass those two cache lines between cores on every operation (6.5% of the deployed
// driver's CPU in YCSB-C, docs/benchmarks.md). Slots taken are all run (the total stays exact); the
// deadline is still checked before each operation. Not thread-safe: one per thread, or per lane of
// clients that all run on one thread. Flush (or destruction) adds what is not yet counted.
class ThreadShare {
 public:
  ThreadShare(Budget& budget, std::atomic<int64_t>& done, int64_t chunk)
      : budget_(budget), done_(done), chunk_(std::max<int64_t>(1, chunk)) {}
  ThreadShare(const ThreadShare&) = delete;
  ThreadShare& operator=(const ThreadShare&) = delete;
  ~ThreadShare() { Flush(); }

  bool Take() {
    if (left_ == 0) left_ = budget_.TakeUpTo(chunk_);
    if (left_ == 0 || budget_.Expired()) return false;
    --left_;
    return true;
  }
  void CountDone() {
    if (++uncounted_ >= chunk_) Flush();
  }
  void Flush() {
    if (uncounted_ == 0) return;
    done_.fetch_add(uncounted_, std::memory_order_relaxed);
    uncounted_ = 0;
  }

 private:
  Budget& budget_;
  std::atomic<int64_t>& done_;
  const int64_t chunk_;
  int64_t left_ = 0;
  int64_t uncounted_ = 0;
};

// Prints "<phase> <N> sec: <ops> operations; <rate> current ops/sec" to stderr every `interval` until
// destroyed, as YCSB's status thread does.
// Where a run's timeline goes: "<unix ms> <operations done>" every `interval` (none if `path` is empty),
// to see a fault's dip at a finer grain than the progress lines (tools/recovery_timeline.py).
struct Timeline {
  std::string path;
  absl::Duration interval = absl::Milliseconds(50);
};

class ProgressReporter {
 public:
  // `stall_report`, if set, is printed when no operation completed for kStallAfter (and again every
  // kStallAgain while that lasts).
  ProgressReporter(const char* phase, absl::Duration interval, const std::atomic<int64_t>* done,
                   Timeline timeline = {}, std::function<std::string()> stall_report = nullptr);
  static constexpr absl::Duration kStallAfter = absl::Seconds(10);
  static constexpr absl::Duration kStallAgain = absl::Seconds(60);
  ~ProgressReporter();

 private:
  void Loop();

  const char* const phase_;
  const absl::Duration interval_;
  const std::atomic<int64_t>* const done_;
  const Timeline timeline_;
  const std::function<std::string()> stall_report_;
  absl::Mutex mu_;
  absl::CondVar cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts after the members it reads
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_RUNNER_SUPPORT_H_
