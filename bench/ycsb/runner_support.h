// What the synchronous and the asynchronous drivers (runner.h, async_runner.h) share: the operation budget,
// per-client seeds, and the progress line on stderr.
#ifndef FATHOM_BENCH_YCSB_RUNNER_SUPPORT_H_
#define FATHOM_BENCH_YCSB_RUNNER_SUPPORT_H_

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
  bool Take() {
    if (deadline_ != absl::InfiniteFuture() && absl::Now() >= deadline_) return false;
    return remaining_.fetch_sub(1, std::memory_order_relaxed) > 0;
  }

 private:
  std::atomic<int64_t> remaining_;
  const absl::Time deadline_;
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
