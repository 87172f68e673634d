// Report: a phase's results in YCSB's text format (stdout) and as JSON (--json_out).
//
//   [OVERALL], RunTime(ms), 1520
//   [OVERALL], Throughput(ops/sec), 657.89
//   [READ], Operations, 496
//   [READ], AverageLatency(us), 61.213
//   [READ], MinLatency(us), 30.112
//   [READ], MaxLatency(us), 812.540
//   [READ], 50thPercentileLatency(us), 55.039
//   [READ], 95thPercentileLatency(us), 98.815
//   [READ], 99thPercentileLatency(us), 190.463
//   [READ], 99.9thPercentileLatency(us), 700.415
//   [READ], Return=OK, 496
//   [CPU], ServerSecondsPerMillionOps, 41.2     (when measured; also DriverSecondsPerMillionOps)
//
// Latencies are measured in ns and printed in µs with three decimals (YCSB prints whole µs, too coarse for
// a sub-microsecond store); percentiles carry the histogram's < 0.8% error (latency_histogram.h).
// "Operations" counts successes; failures get their own "[READ-FAILED]" series, as in YCSB, while every
// return code is counted under the operation's own name.
#ifndef FATHOM_BENCH_YCSB_REPORT_H_
#define FATHOM_BENCH_YCSB_REPORT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "bench/ycsb/measurements.h"

namespace fathom::ycsb {

struct PhaseResult {
  std::string phase;    // "load" or "run"
  absl::Duration runtime;
  uint64_t operations = 0;  // every operation attempted, failed ones included (a read-modify-write is one)
  Measurements measurements;
  // CPU seconds (user + system) spent during the phase, -1 where not measured: by the server processes
  // (memcached, redis-server; for an embedded Fathom cluster, this process, clients included), and by
  // this driver process.
  double server_cpu_seconds = -1;
  double driver_cpu_seconds = -1;
  // What the servers' own accounting says the data takes at the end of the phase, -1 where not measured
  // (server_memory.h): memory taken (Redis used_memory, memcached total_malloced, Fathom's carved slabs ×
  // copies), and allocated (Redis used_memory, Fathom's slots of live objects × copies).
  int64_t server_memory_bytes = -1;
  int64_t server_allocated_bytes = -1;

  double Throughput() const;
  // CPU seconds per million operations (-1 if not measured), as Pilaf and PERK report server cost.
  double CpuPerMillion(double cpu_seconds) const;
};

std::string FormatYcsbText(const PhaseResult& result);
// One line to take in at a glance, after the report, in YCSB's "[SECTION], name, value" shape: "[SUMMARY],
// run, 1000000 operations in 12.3 s = 81234 ops/s; READ p50 3.9 us p99 20.2 us; UPDATE p50 158.7 us p99
// 362.5 us; 0 errors".
std::string FormatSummary(const PhaseResult& result);
// {"config": {...}, "phases": [{"phase": "run", "runtime_ms": ..., "throughput_ops_per_sec": ...,
//   "operations": ..., "measurements": {"READ": {"operations": ..., "average_us": ..., "min_us": ...,
//   "max_us": ..., "p50_us": ..., "p95_us": ..., "p99_us": ..., "p999_us": ..., "cdf_us": [[p, latency at p], ...], "returns": {"OK": ...}}},
//   "server_cpu_s": ..., "driver_cpu_s": ..., "server_memory_bytes": ..., "server_allocated_bytes": ...}]}
std::string FormatJson(const std::vector<std::pair<std::string, std::string>>& config,
                       const std::vector<PhaseResult>& phases);

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_REPORT_H_
