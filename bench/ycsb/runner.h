// Runner: drives a CoreWorkload with client threads, as YCSB's Client and ClientThread do — each thread
// owns a Backend (Init on that thread), takes operations from a shared budget until it is spent, keeps to
// its share of the target rate, and records into its own Measurements, merged at the end. Warm-up
// operations run first on every thread and are not measured; the clock starts when all threads have
// warmed up. Progress goes to stderr every `status_interval`.
//
//   RunOptions options{.phase = Phase::kRun, .threads = 2};
//   ASSIGN_OR_RETURN(PhaseResult result, RunPhase(*workload, make_backend, options));
#ifndef FATHOM_BENCH_YCSB_RUNNER_H_
#define FATHOM_BENCH_YCSB_RUNNER_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/ycsb/backend.h"
#include "bench/ycsb/core_workload.h"
#include "bench/ycsb/report.h"
#include "bench/ycsb/runner_support.h"

namespace fathom::ycsb {

enum class Phase { kLoad, kRun };

struct RunOptions {
  Phase phase = Phase::kRun;
  int threads = 1;
  double target_ops_per_sec = 0;  // 0: as fast as possible
  int64_t warmup_ops = 0;         // run phase only: extra, unmeasured operations before the clock starts
  absl::Duration status_interval = absl::Seconds(10);
  // The run phase's timeline of operations done (runner_support.h); none if the path is empty.
  Timeline timeline;
  uint64_t seed = 1;              // thread i seeds its generators from (seed, phase, i)
  // Run phase only: no operation starts this long after the clock started (maxexecutiontime).
  absl::Duration max_execution_time = absl::InfiniteDuration();
};

using BackendFactory = std::function<std::unique_ptr<Backend>()>;

// Load: inserts recordcount records (operation budget = insertcount). Run: operationcount operations.
// Fails only if a backend cannot Init; operation errors are counted, not returned.
absl::StatusOr<PhaseResult> RunPhase(CoreWorkload& workload, const BackendFactory& make_backend,
                                     const RunOptions& options);

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_RUNNER_H_
