#include "bench/ycsb/report.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

PhaseResult Sample() {
  PhaseResult result;
  result.phase = "run";
  result.runtime = absl::Milliseconds(2000);
  result.operations = 1000;
  for (int i = 0; i < 600; ++i) result.measurements.Record(Operation::kRead, 50'000, ReturnCode::kOk);
  for (int i = 0; i < 3; ++i) result.measurements.Record(Operation::kRead, 10'000, ReturnCode::kNotFound);
  for (int i = 0; i < 396; ++i) result.measurements.Record(Operation::kUpdate, 80'000, ReturnCode::kOk);
  result.measurements.Record(Operation::kUpdate, 5'000'000, ReturnCode::kError);
  return result;
}

TEST(ReportTest, TheSummaryIsOneLineOfThroughputPercentilesAndErrors) {
  EXPECT_EQ(FormatSummary(Sample()),
            "[SUMMARY], run, 1000 operations in 2.0 s = 500 ops/s; READ p50 50.0 us p99 50.0 us; "
            "UPDATE p50 80.0 us p99 80.0 us; 1 error\n");
}

TEST(ReportTest, TextFollowsYcsbFormat) {
  const std::string text = FormatYcsbText(Sample());
  const char* expected_lines[] = {
      "[OVERALL], RunTime(ms), 2000\n",
      "[OVERALL], Throughput(ops/sec), 500.00\n",
      "[READ], Operations, 600\n",
      "[READ], AverageLatency(us), 50.000\n",
      "[READ], MinLatency(us), 50.000\n",
      "[READ], MaxLatency(us), 50.000\n",
      "[READ], 50thPercentileLatency(us), 50.000\n",
      "[READ], 95thPercentileLatency(us), 50.000\n",
      "[READ], 99thPercentileLatency(us), 50.000\n",
      "[READ], 99.9thPercentileLatency(us), 50.000\n",
      "[READ], Return=OK, 600\n",
      "[READ], Return=NOT_FOUND, 3\n",
      "[READ-FAILED], Operations, 3\n",
      "[UPDATE], Operations, 396\n",
      "[UPDATE], Return=OK, 396\n",
      "[UPDATE], Return=ERROR, 1\n",
      "[UPDATE-FAILED], MaxLatency(us), 5000.000\n",
  };
  for (const char* line : expected_lines) EXPECT_TRUE(absl::StrContains(text, line)) << line << "\n" << text;
  EXPECT_FALSE(absl::StrContains(text, "[INSERT]"));
  EXPECT_FALSE(absl::StrContains(text, "[SCAN]"));
  // Operations print in YCSB's order.
  EXPECT_LT(text.find("[READ]"), text.find("[UPDATE]"));
}

TEST(ReportTest, JsonCarriesTheSameNumbers) {
  const std::string json = FormatJson({{"backend", "redis"}, {"quote\"d", "a\\b"}}, {Sample()});
  for (const char* part : {"\"backend\": \"redis\"", "\"quote\\\"d\": \"a\\\\b\"", "\"phase\": \"run\"",
                           "\"runtime_ms\": 2000", "\"operations\": 1000", "\"throughput_ops_per_sec\": 500.00",
                           "\"READ\": {\"operations\": 600", "\"p999_us\": 50.000",
                           "\"returns\": {\"OK\": 600, \"NOT_FOUND\": 3}", "\"UPDATE-FAILED\": {\"operations\": 1",
                           "\"returns\": {\"OK\": 396, \"ERROR\": 1}"}) {
    EXPECT_TRUE(absl::StrContains(json, part)) << part << "\n" << json;
  }
  // Balanced braces: a cheap structural check (no JSON parser in the build).
  int depth = 0;
  for (char c : json) {
    depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    ASSERT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
}

TEST(ReportTest, CpuCostPerMillionOperationsAndTheLatencyCdf) {
  PhaseResult result = Sample();
  EXPECT_FALSE(absl::StrContains(FormatYcsbText(result), "[CPU]"));  // not measured: not printed
  result.server_cpu_seconds = 0.05;                                    // 1000 operations
  result.driver_cpu_seconds = 0.2;
  const std::string text = FormatYcsbText(result);
  EXPECT_TRUE(absl::StrContains(text, "[CPU], ServerSecondsPerMillionOps, 50.00\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "[CPU], DriverSecondsPerMillionOps, 200.00\n")) << text;
  const std::string json = FormatJson({}, {result});
  EXPECT_TRUE(absl::StrContains(json, "\"server_cpu_s\": 0.050, \"driver_cpu_s\": 0.200")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"cdf_us\": [[1, 50.000], [2, 50.000]")) << json;
  EXPECT_TRUE(absl::StrContains(json, "[99.99, 50.000], [100, 50.000]]")) << json;
}

TEST(ReportTest, ServerMemoryOnlyWhereMeasured) {
  PhaseResult result = Sample();
  EXPECT_FALSE(absl::StrContains(FormatYcsbText(result), "[MEMORY]"));
  EXPECT_TRUE(absl::StrContains(FormatJson({}, {result}), "\"server_memory_bytes\": -1, \"server_allocated_bytes\": -1}"));
  result.server_memory_bytes = 123456789;
  EXPECT_TRUE(absl::StrContains(FormatYcsbText(result), "[MEMORY], ServerBytes, 123456789\n"));
  EXPECT_FALSE(absl::StrContains(FormatYcsbText(result), "ServerAllocatedBytes"));
  EXPECT_TRUE(absl::StrContains(FormatJson({}, {result}), "\"server_memory_bytes\": 123456789, \"server_allocated_bytes\": -1}"));
  result.server_allocated_bytes = 120000000;
  EXPECT_TRUE(absl::StrContains(FormatYcsbText(result), "[MEMORY], ServerAllocatedBytes, 120000000\n"));
  EXPECT_TRUE(absl::StrContains(FormatJson({}, {result}), "\"server_allocated_bytes\": 120000000}"));
}

}  // namespace
}  // namespace fathom::ycsb
