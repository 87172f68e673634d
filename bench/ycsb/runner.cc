#include "bench/ycsb/runner.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <latch>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "platform/base/mutex.h"

namespace fathom::ycsb {
namespace {

// SplitMix64 finalizer: turns (seed, phase, thread) into well-separated generator seeds.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Hands out operation slots from a fixed budget to all threads.
class Budget {
 public:
  explicit Budget(int64_t total) : remaining_(total) {}
  bool Take() { return remaining_.fetch_sub(1, std::memory_order_relaxed) > 0; }

 private:
  std::atomic<int64_t> remaining_;
};

// Prints "<phase> <N> sec: <ops> operations; <rate> current ops/sec" to stderr until stopped.
class ProgressReporter {
 public:
  ProgressReporter(const char* phase, absl::Duration interval, const std::atomic<int64_t>* done)
      : phase_(phase), interval_(interval), done_(done), thread_([this] { Loop(); }) {}
  ~ProgressReporter() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    cv_.Signal();
    thread_.join();
  }

 private:
  void Loop() {
    const absl::Time start = absl::Now();
    absl::Time last_time = start;
    int64_t last_done = 0;
    MutexLock lock(&mu_);
    while (true) {
      const absl::Time deadline = last_time + interval_;
      while (!stop_ && !WaitWithDeadline(&cv_, &mu_, deadline)) {
      }
      if (stop_) return;
      const absl::Time now = absl::Now();
      const int64_t done = done_->load(std::memory_order_relaxed);
      const double rate = static_cast<double>(done - last_done) / absl::ToDoubleSeconds(now - last_time);
      std::fprintf(stderr, "%s %lld sec: %lld operations; %.1f current ops/sec\n", phase_,
                   static_cast<long long>(absl::ToInt64Seconds(now - start)), static_cast<long long>(done), rate);
      last_time = now;
      last_done = done;
    }
  }

  const char* const phase_;
  const absl::Duration interval_;
  const std::atomic<int64_t>* const done_;
  absl::Mutex mu_;
  absl::CondVar cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts after the members it reads
};

}  // namespace

absl::StatusOr<PhaseResult> RunPhase(CoreWorkload& workload, const BackendFactory& make_backend,
                                     const RunOptions& options) {
  const bool load = options.phase == Phase::kLoad;
  const int threads = std::max(1, options.threads);
  const int64_t budget_size = load ? workload.config().insert_count : workload.config().operation_count;
  Budget warmup_budget(load ? 0 : options.warmup_ops);
  Budget budget(budget_size);
  // Per thread, YCSB's ClientThread throttle: operation k starts no earlier than start + k / rate.
  const double per_thread_rate = options.target_ops_per_sec / threads;
  const auto tick = per_thread_rate > 0 ? std::chrono::nanoseconds(static_cast<int64_t>(1e9 / per_thread_rate))
                                        : std::chrono::nanoseconds(0);

  std::vector<Measurements> measurements(static_cast<size_t>(threads));
  std::vector<absl::Status> init_status(static_cast<size_t>(threads));
  std::atomic<int64_t> operations_done{0};
  std::latch warmed_up(threads);
  std::latch go(1);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::unique_ptr<Backend> db = make_backend();
      absl::Status status = db->Init();
      if (!status.ok()) {
        init_status[static_cast<size_t>(t)] = status;
        warmed_up.count_down();
        return;
      }
      auto state = workload.NewThreadState(Mix(options.seed ^ Mix((load ? 0x10000 : 0x20000) + t)));
      while (warmup_budget.Take()) workload.DoTransaction(*db, *state, nullptr);
      warmed_up.count_down();
      go.wait();
      const auto start = std::chrono::steady_clock::now();
      for (int64_t done = 0; budget.Take(); ++done) {
        if (tick.count() > 0) std::this_thread::sleep_until(start + done * tick);
        if (load) {
          workload.DoInsert(*db, *state, &measurements[static_cast<size_t>(t)]);
        } else {
          workload.DoTransaction(*db, *state, &measurements[static_cast<size_t>(t)]);
        }
        operations_done.fetch_add(1, std::memory_order_relaxed);
      }
      db->Cleanup().IgnoreError();
    });
  }
  warmed_up.wait();
  const absl::Time start = absl::Now();
  go.count_down();
  {
    ProgressReporter progress(load ? "load" : "run", options.status_interval, &operations_done);
    for (std::thread& worker : workers) worker.join();
  }
  PhaseResult result;
  result.phase = load ? "load" : "run";
  result.runtime = absl::Now() - start;
  result.operations = static_cast<uint64_t>(operations_done.load());
  for (const absl::Status& status : init_status) {
    if (!status.ok()) return absl::Status(status.code(), absl::StrCat("backend init: ", status.message()));
  }
  for (const Measurements& m : measurements) result.measurements.Merge(m);
  return result;
}

}  // namespace fathom::ycsb
