// --crash_at_step=STEP:N (tests only): the driver kills itself with SIGKILL the Nth time one of its commits
// reaches STEP (txn::TxnOptions::on_step), so tests/faults can kill the coordinator of every transaction at a
// chosen step of the commit protocol rather than at a random moment.
#ifndef FATHOM_BENCH_YCSB_CRASH_AT_STEP_H_
#define FATHOM_BENCH_YCSB_CRASH_AT_STEP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fathom::ycsb {

struct CrashAtStep {
  std::string step;  // one of the commit's named steps (txn_options.h)
  uint64_t count = 0;  // >= 1
};

// Parses "STEP:N"; InvalidArgument naming what is wrong (an unknown step, a count that is not a positive
// integer, a missing colon).
absl::StatusOr<CrashAtStep> ParseCrashAtStep(std::string_view text);

// The on_step hook: counts the commits that reach `crash.step` (from any thread) and calls `kill` at the
// Nth. `kill` is raise(SIGKILL) in the driver; tests pass their own.
std::function<void(std::string_view step)> CrashHook(const CrashAtStep& crash, std::function<void()> kill);

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_CRASH_AT_STEP_H_
