// Runs //bench:ycsb as a user would: it starts its own redis-server or memcached, loads workload A
// (1000 records) and runs it (1000 operations) with 2 threads; the report must count every operation as OK.
#include <sys/wait.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "bench/ycsb_test_util.h"

namespace fathom {
namespace {

using testing::Count;
using testing::Output;
using testing::RunYcsb;

class EndToEndTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EndToEndTest, WorkloadALoadsAndRunsWithoutErrors) {
  const std::string json_path = std::string(std::getenv("TEST_TMPDIR")) + "/report_" + GetParam() + ".json";
  const Output out = RunYcsb({"--backend=" + GetParam(), "--workload=a", "--threads=2", "--seed=7",
                              "--json_out=" + json_path, "-p", "recordcount=1000", "-p", "operationcount=1000"});
  ASSERT_EQ(out.exit_code, 0) << out.text;
  EXPECT_EQ(Count(out, "load [INSERT], Return=OK"), 1000) << out.text;
  EXPECT_EQ(Count(out, "load [INSERT], Operations"), 1000);
  const int64_t reads = Count(out, "run [READ], Return=OK");
  const int64_t updates = Count(out, "run [UPDATE], Return=OK");
  EXPECT_EQ(reads + updates, 1000) << out.text;
  EXPECT_GT(reads, 350);
  EXPECT_GT(updates, 350);
  EXPECT_EQ(Count(out, "run [READ], Operations"), reads);
  EXPECT_FALSE(absl::StrContains(out.text, "Return=ERROR")) << out.text;
  EXPECT_FALSE(absl::StrContains(out.text, "Return=NOT_FOUND")) << out.text;
  EXPECT_FALSE(absl::StrContains(out.text, "-FAILED")) << out.text;
  for (const char* metric : {"AverageLatency(us)", "MinLatency(us)", "MaxLatency(us)", "50thPercentileLatency(us)",
                             "95thPercentileLatency(us)", "99thPercentileLatency(us)", "99.9thPercentileLatency(us)"}) {
    EXPECT_TRUE(out.values.count(std::string("run [READ], ") + metric)) << metric;
  }
  EXPECT_TRUE(out.values.count("run [OVERALL], RunTime(ms)"));
  EXPECT_TRUE(out.values.count("run [OVERALL], Throughput(ops/sec)"));

  std::ifstream json_file(json_path);
  std::stringstream json;
  json << json_file.rdbuf();
  EXPECT_TRUE(absl::StrContains(json.str(), "\"phase\": \"run\"")) << json.str();
  EXPECT_TRUE(absl::StrContains(json.str(), "\"backend\": \"" + GetParam() + "\""));
  EXPECT_TRUE(absl::StrContains(json.str(), "\"returns\": {\"OK\": " + std::to_string(reads) + "}"));
}

// The bank: every transfer commits and the total is conserved (fathom: node-thread clients and application
// threads; redis: WATCH/MULTI/EXEC); memcached reports NOT_IMPLEMENTED.
TEST_P(EndToEndTest, BankConservesTheTotal) {
  const Output out = RunYcsb({"--backend=" + GetParam(), "--workload=bank", "--threads=6", "--seed=11", "-p",
                              "recordcount=100", "-p", "operationcount=2000"});
  ASSERT_EQ(out.exit_code, 0) << out.text;
  EXPECT_EQ(Count(out, "run [BANK], Total"), 100000) << out.text;
  EXPECT_EQ(Count(out, "run [BANK], ExpectedTotal"), 100000);
  if (GetParam() == "memcached") {
    EXPECT_EQ(Count(out, "run [TRANSFER], Return=NOT_IMPLEMENTED"), 2000) << out.text;
  } else {
    EXPECT_EQ(Count(out, "run [TRANSFER], Return=OK"), 2000) << out.text;
  }
  if (GetParam() == "fathom") {
    const Output app = RunYcsb({"--backend=fathom", "--fathom_clients=app", "--workload=bank", "--threads=3",
                                "-p", "recordcount=50", "-p", "operationcount=600"});
    ASSERT_EQ(app.exit_code, 0) << app.text;
    EXPECT_EQ(Count(app, "run [TRANSFER], Return=OK"), 600) << app.text;
    EXPECT_EQ(Count(app, "run [BANK], Total"), 50000);
  }
}

// The fathom backend's other client placements and the read-modify-write path: clients on application
// threads (blocking calls), and workload F on node-thread clients.
TEST(EndToEndFathomTest, ApplicationThreadClientsAndReadModifyWrites) {
  const Output app = RunYcsb({"--backend=fathom", "--fathom_clients=app", "--workload=a", "--threads=2", "--seed=3",
                              "-p", "recordcount=300", "-p", "operationcount=300"});
  ASSERT_EQ(app.exit_code, 0) << app.text;
  EXPECT_EQ(Count(app, "run [READ], Return=OK") + Count(app, "run [UPDATE], Return=OK"), 300) << app.text;
  const Output f = RunYcsb({"--backend=fathom", "--workload=f", "--threads=8", "--seed=4", "-p", "recordcount=300",
                            "-p", "operationcount=600"});
  ASSERT_EQ(f.exit_code, 0) << f.text;
  const int64_t rmw = Count(f, "run [READ-MODIFY-WRITE], Return=OK");
  EXPECT_GT(rmw, 150) << f.text;
  EXPECT_EQ(Count(f, "run [UPDATE], Return=OK"), rmw);
  EXPECT_EQ(Count(f, "run [READ], Return=OK"), 600);
  EXPECT_FALSE(absl::StrContains(f.text, "Return=ERROR")) << f.text;
  const Output bad = RunYcsb({"--backend=fathom", "--fathom_clients=gpu"});
  EXPECT_NE(bad.exit_code, 0);
  // Node-thread clients have no timers to keep to a target rate: refused, not ignored.
  const Output throttled = RunYcsb({"--backend=fathom", "--target=100", "-p", "recordcount=10"});
  EXPECT_NE(throttled.exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, EndToEndTest, ::testing::Values("fathom", "redis", "memcached"),
                         [](const auto& info) { return info.param; });

// Operations that end in error are listed with their reason and counts, and the exit status is 1 (it was 0,
// with the reasons dropped). Records of 3 MB are over a table's value limit: every insert fails.
TEST(EndToEndCliTest, FailedOperationsAreListedAndTheExitStatusSaysSo) {
  const Output out = RunYcsb({"--backend=fathom", "--workload=a", "--seed=3", "-p", "recordcount=5", "-p",
                              "operationcount=5", "-p", "fieldlength=300000"});
  EXPECT_EQ(out.exit_code, 1) << out.text;
  EXPECT_EQ(Count(out, "load [INSERT], Return=ERROR"), 5) << out.text;
  EXPECT_TRUE(absl::StrContains(out.text, "[ERRORS], 5, INSERT: INVALID_ARGUMENT: kv value of")) << out.text;
}

TEST(EndToEndCliTest, UnknownOrUnbuiltBackendsFailClearly) {
  const Output joining = RunYcsb({"--backend=fathom", "--server=127.0.0.1:1"});
  EXPECT_EQ(joining.exit_code, 1) << "joining a running cluster is not built";
  const Output bad_fabric = RunYcsb({"--backend=fathom", "--fathom_fabric=rdma"});
  EXPECT_EQ(bad_fabric.exit_code, 1);
  const Output unknown = RunYcsb({"--backend=cassandra"});
  EXPECT_EQ(unknown.exit_code, 1);
  const Output run_only = RunYcsb({"--backend=redis", "--phase=run"});
  EXPECT_EQ(run_only.exit_code, 1);
}

}  // namespace
}  // namespace fathom
