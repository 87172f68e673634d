#include "bench/ycsb/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fathom::ycsb {
namespace {

constexpr ReturnCode kReturnCodes[] = {ReturnCode::kOk, ReturnCode::kNotFound, ReturnCode::kNotImplemented,
                                       ReturnCode::kError};
constexpr Operation kOperations[] = {Operation::kRead, Operation::kUpdate, Operation::kInsert,
                                     Operation::kScan, Operation::kReadModifyWrite, Operation::kDelete,
                                     Operation::kTransfer};

std::string Micros(uint64_t ns) { return absl::StrFormat("%.3f", static_cast<double>(ns) / 1000.0); }

struct Percentile {
  const char* text_name;
  const char* json_name;
  double value;
};
constexpr Percentile kPercentiles[] = {{"50th", "p50_us", 50.0},
                                       {"95th", "p95_us", 95.0},
                                       {"99th", "p99_us", 99.0},
                                       {"99.9th", "p999_us", 99.9}};

bool HasAny(const Measurements& m, Operation op) {
  for (ReturnCode code : kReturnCodes) {
    if (m.Returns(op, code) > 0) return true;
  }
  return false;
}

void AppendLatencyLines(const std::string& name, const LatencyHistogram& h, std::string* out) {
  absl::StrAppend(out, "[", name, "], Operations, ", h.count(), "\n");
  absl::StrAppend(out, "[", name, "], AverageLatency(us), ", absl::StrFormat("%.3f", h.Mean() / 1000.0), "\n");
  absl::StrAppend(out, "[", name, "], MinLatency(us), ", Micros(h.min()), "\n");
  absl::StrAppend(out, "[", name, "], MaxLatency(us), ", Micros(h.max()), "\n");
  for (const Percentile& p : kPercentiles) {
    absl::StrAppend(out, "[", name, "], ", p.text_name, "PercentileLatency(us), ", Micros(h.ValueAtPercentile(p.value)),
                    "\n");
  }
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string JsonLatency(const LatencyHistogram& h) {
  std::string out = absl::StrCat("\"operations\": ", h.count(), ", \"average_us\": ",
                                 absl::StrFormat("%.3f", h.Mean() / 1000.0), ", \"min_us\": ", Micros(h.min()),
                                 ", \"max_us\": ", Micros(h.max()));
  for (const Percentile& p : kPercentiles) {
    absl::StrAppend(&out, ", \"", p.json_name, "\": ", Micros(h.ValueAtPercentile(p.value)));
  }
  // The latency distribution for CDF plots: every whole percentile, then the tail.
  out += ", \"cdf_us\": [";
  std::vector<double> points;
  for (int p = 1; p <= 99; ++p) points.push_back(p);
  for (double p : {99.5, 99.9, 99.99, 100.0}) points.push_back(p);
  for (size_t i = 0; i < points.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ", ", "[", points[i], ", ",
                    Micros(points[i] >= 100 ? h.max() : h.ValueAtPercentile(points[i])), "]");
  }
  out += "]";
  return out;
}

}  // namespace

std::string FormatSummary(const PhaseResult& result) {
  const Measurements& m = result.measurements;
  std::string out = absl::StrFormat("[SUMMARY], %s, %d operations in %.1f s = %.0f ops/s", result.phase,
                                    result.operations, absl::ToDoubleSeconds(result.runtime), result.Throughput());
  for (Operation op : kOperations) {
    const LatencyHistogram& h = m.Latencies(op, /*failed=*/false);
    if (h.count() == 0) continue;
    absl::StrAppend(&out, absl::StrFormat("; %s p50 %.1f us p99 %.1f us", OperationName(op),
                                          h.ValueAtPercentile(50) / 1000.0, h.ValueAtPercentile(99) / 1000.0));
  }
  absl::StrAppend(&out, "; ", m.error_count(), m.error_count() == 1 ? " error\n" : " errors\n");
  return out;
}

double PhaseResult::Throughput() const {
  const double seconds = absl::ToDoubleSeconds(runtime);
  return seconds > 0 ? static_cast<double>(operations) / seconds : 0.0;
}

double PhaseResult::CpuPerMillion(double cpu_seconds) const {
  if (cpu_seconds < 0 || operations == 0) return -1;
  return cpu_seconds * 1e6 / static_cast<double>(operations);
}

std::string FormatYcsbText(const PhaseResult& result) {
  std::string out;
  absl::StrAppend(&out, "[OVERALL], RunTime(ms), ", absl::ToInt64Milliseconds(result.runtime), "\n");
  absl::StrAppend(&out, "[OVERALL], Throughput(ops/sec), ", absl::StrFormat("%.2f", result.Throughput()), "\n");
  const Measurements& m = result.measurements;
  for (Operation op : kOperations) {
    if (!HasAny(m, op)) continue;
    const std::string name = OperationName(op);
    AppendLatencyLines(name, m.Latencies(op, /*failed=*/false), &out);
    for (ReturnCode code : kReturnCodes) {
      if (m.Returns(op, code) > 0) {
        absl::StrAppend(&out, "[", name, "], Return=", ReturnCodeName(code), ", ", m.Returns(op, code), "\n");
      }
    }
    if (m.Latencies(op, /*failed=*/true).count() > 0) {
      AppendLatencyLines(name + "-FAILED", m.Latencies(op, /*failed=*/true), &out);
    }
  }
  if (result.server_cpu_seconds >= 0) {
    absl::StrAppend(&out, "[CPU], ServerSecondsPerMillionOps, ",
                    absl::StrFormat("%.2f", result.CpuPerMillion(result.server_cpu_seconds)), "\n");
  }
  if (result.driver_cpu_seconds >= 0) {
    absl::StrAppend(&out, "[CPU], DriverSecondsPerMillionOps, ",
                    absl::StrFormat("%.2f", result.CpuPerMillion(result.driver_cpu_seconds)), "\n");
  }
  if (result.server_memory_bytes >= 0) {
    absl::StrAppend(&out, "[MEMORY], ServerBytes, ", result.server_memory_bytes, "\n");
  }
  if (result.server_allocated_bytes >= 0) {
    absl::StrAppend(&out, "[MEMORY], ServerAllocatedBytes, ", result.server_allocated_bytes, "\n");
  }
  return out;
}

std::string FormatJson(const std::vector<std::pair<std::string, std::string>>& config,
                       const std::vector<PhaseResult>& phases) {
  std::string out = "{\n  \"config\": {";
  for (size_t i = 0; i < config.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ", ", JsonString(config[i].first), ": ", JsonString(config[i].second));
  }
  out += "},\n  \"phases\": [";
  for (size_t i = 0; i < phases.size(); ++i) {
    const PhaseResult& phase = phases[i];
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", "    {\"phase\": ", JsonString(phase.phase),
                    ", \"runtime_ms\": ", absl::ToInt64Milliseconds(phase.runtime),
                    ", \"operations\": ", phase.operations, ", \"throughput_ops_per_sec\": ",
                    absl::StrFormat("%.2f", phase.Throughput()), ",\n     \"measurements\": {");
    bool first = true;
    for (Operation op : kOperations) {
      if (!HasAny(phase.measurements, op)) continue;
      for (bool failed : {false, true}) {
        const LatencyHistogram& h = phase.measurements.Latencies(op, failed);
        if (failed && h.count() == 0) continue;
        absl::StrAppend(&out, first ? "\n" : ",\n", "       ",
                        JsonString(absl::StrCat(OperationName(op), failed ? "-FAILED" : "")), ": {",
                        JsonLatency(h));
        if (!failed) {
          out += ", \"returns\": {";
          bool first_code = true;
          for (ReturnCode code : kReturnCodes) {
            if (phase.measurements.Returns(op, code) == 0) continue;
            absl::StrAppend(&out, first_code ? "" : ", ", "\"", ReturnCodeName(code),
                            "\": ", phase.measurements.Returns(op, code));
            first_code = false;
          }
          out += "}";
        }
        out += "}";
        first = false;
      }
    }
    absl::StrAppend(&out, "},\n     \"server_cpu_s\": ", absl::StrFormat("%.3f", phase.server_cpu_seconds),
                    ", \"driver_cpu_s\": ", absl::StrFormat("%.3f", phase.driver_cpu_seconds),
                    ", \"server_memory_bytes\": ", phase.server_memory_bytes,
                    ", \"server_allocated_bytes\": ", phase.server_allocated_bytes, "}");
  }
  out += "\n  ]\n}\n";
  return out;
}

}  // namespace fathom::ycsb
