#include "bench/ycsb/runner.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <latch>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "bench/ycsb/runner_support.h"

namespace fathom::ycsb {
namespace {

// Budget slots a client thread takes at once: few, so that the threads still running at the end wait
// on at most a few operations of one slow thread.
constexpr int64_t kThreadChunk = 4;

}  // namespace

absl::StatusOr<PhaseResult> RunPhase(CoreWorkload& workload, const BackendFactory& make_backend,
                                     const RunOptions& options) {
  const bool load = options.phase == Phase::kLoad;
  const int threads = std::max(1, options.threads);
  const int64_t budget_size = load ? workload.config().insert_count : workload.config().operation_count;
  Budget warmup_budget(load ? 0 : options.warmup_ops);
  std::optional<Budget> budget;  // made when the clock starts: its deadline counts from then
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
      auto state = workload.NewThreadState(ClientSeed(options.seed, load, t));
      while (warmup_budget.Take()) workload.DoTransaction(*db, *state, nullptr);
      warmed_up.count_down();
      go.wait();
      const auto start = std::chrono::steady_clock::now();
      ThreadShare share(*budget, operations_done, kThreadChunk);
      for (int64_t done = 0; share.Take(); ++done) {
        if (tick.count() > 0) std::this_thread::sleep_until(start + done * tick);
        if (load) {
          workload.DoInsert(*db, *state, &measurements[static_cast<size_t>(t)]);
        } else {
          workload.DoTransaction(*db, *state, &measurements[static_cast<size_t>(t)]);
        }
        share.CountDone();
      }
      share.Flush();
      db->Cleanup().IgnoreError();
    });
  }
  warmed_up.wait();
  const absl::Time start = absl::Now();
  budget.emplace(budget_size, load ? absl::InfiniteFuture() : start + options.max_execution_time);
  go.count_down();
  {
    ProgressReporter progress(load ? "load" : "run", options.status_interval, &operations_done,
                              load ? Timeline{} : options.timeline);
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
