// RunPhaseAsync: YCSB's core workload with its clients on an AsyncLanes' threads. `options.threads`
// clients, spread round robin over the lanes, each a closed loop with one operation in flight — the same
// load as YCSB's client threads, without an application thread (and two thread switches) per operation.
// Each client has its own generators, seeded as runner.h seeds its threads, and the same operation budget,
// warm-up and report.
//
//   ASSIGN_OR_RETURN(PhaseResult result, RunPhaseAsync(*workload, *cluster, {.phase = Phase::kRun, .threads = 64}));
//
// Not supported (InvalidArgument): a target rate (lanes have no timers) and insert retries
// (core_workload_insertion_retry_limit > 0).
#ifndef FATHOM_BENCH_YCSB_ASYNC_RUNNER_H_
#define FATHOM_BENCH_YCSB_ASYNC_RUNNER_H_

#include "absl/status/statusor.h"
#include "bench/ycsb/async_backend.h"
#include "bench/ycsb/core_workload.h"
#include "bench/ycsb/report.h"
#include "bench/ycsb/runner.h"

namespace fathom::ycsb {

absl::StatusOr<PhaseResult> RunPhaseAsync(CoreWorkload& workload, AsyncLanes& lanes, const RunOptions& options);

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_ASYNC_RUNNER_H_
