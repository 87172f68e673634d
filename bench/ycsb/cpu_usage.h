// CPU time of processes, for the report's CPU seconds per million operations.
#ifndef FATHOM_BENCH_YCSB_CPU_USAGE_H_
#define FATHOM_BENCH_YCSB_CPU_USAGE_H_

#include <sys/types.h>

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace fathom::ycsb {

// User + system CPU seconds `pid` has used so far, from /proc/<pid>/stat (clock-tick resolution).
// NotFound if there is no such process, DataLoss if the file does not parse.
absl::StatusOr<double> ProcessCpuSeconds(pid_t pid);
// The sum over `pids` (an empty list: 0). NotFound naming the pid when one of them is gone.
absl::StatusOr<double> ProcessesCpuSeconds(absl::Span<const pid_t> pids);
// This process's, from getrusage (microsecond resolution).
double SelfCpuSeconds();

// "123,456" (the driver's --server_pids) as pids: positive decimal numbers, commas between, no repeats.
// An empty text is an empty list. InvalidArgument saying which entry is wrong.
absl::StatusOr<std::vector<pid_t>> ParsePidList(absl::string_view text);

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_CPU_USAGE_H_
