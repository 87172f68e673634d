// CPU time of processes, for the report's CPU seconds per million operations.
#ifndef FATHOM_BENCH_YCSB_CPU_USAGE_H_
#define FATHOM_BENCH_YCSB_CPU_USAGE_H_

#include <sys/types.h>

#include "absl/status/statusor.h"

namespace fathom::ycsb {

// User + system CPU seconds `pid` has used so far, from /proc/<pid>/stat (clock-tick resolution).
// NotFound if there is no such process, DataLoss if the file does not parse.
absl::StatusOr<double> ProcessCpuSeconds(pid_t pid);
// This process's, from getrusage (microsecond resolution).
double SelfCpuSeconds();

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_CPU_USAGE_H_
