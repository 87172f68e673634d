// A whole-cluster restart of a cluster whose membership comes from ZooKeeper (fathomd --zk --data_dir):
// three fathomd processes hold a YCSB table and a bank table written by the YCSB driver (a client-only
// member), every process is SIGKILLed once the logs have the writes, and all three are started again with
// their directories. Each waits for the members its log recorded (m:members), gathers their logs and
// rebuilds its memory from the consistent cut; then a second driver reads every record back, and the
// bank's total is what it was.
#include <signal.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/ycsb_test_util.h"
#include "gtest/gtest.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/fresh_dir.h"
#include "tests/zookeeper/zookeeper_server.h"

namespace fathom {
namespace {

constexpr char kToken[] = "fathomd-zk-restart-test-token-01";
constexpr int kNodes = 3;
constexpr int kRecords = 300;
using ::fathom::testing::Count;
using ::fathom::testing::Output;
using ::fathom::testing::RunYcsb;

class FathomdZooKeeperRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FreshTestDir("fathomd_zk_restart_test", "cluster");
    auto zk = testing::ZooKeeperServer::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = std::move(*zk);
  }

  std::vector<std::string> NodeFlags(int id) {
    return {absl::StrCat("--token=", kToken), "--listen=127.0.0.1:0", "--memory=64M", "--region_size=16M",
            "--threads=2", "--transports=sm", "--cluster=restart", absl::StrCat("--zk=", zk_->connect_string()),
            "--zk_session_timeout=2s", absl::StrCat("--data_dir=", root_, "/node", id)};
  }

  // Starts every node at once (a restarting node waits for the others before it prints READY).
  void StartAll() {
    std::vector<std::unique_ptr<testing::Subprocess>> launched;
    for (int id = 1; id <= kNodes; ++id) {
      auto process = testing::LaunchFathomd(id, NodeFlags(id));
      ASSERT_TRUE(process.ok()) << process.status();
      launched.push_back(std::move(*process));
    }
    nodes_.clear();
    for (int id = 1; id <= kNodes; ++id) {
      auto ready = testing::WaitForReady(id, std::move(launched[id - 1]));
      ASSERT_TRUE(ready.ok()) << ready.status();
      nodes_.push_back(std::move(*ready));
    }
  }

  std::map<std::string, uint64_t> Counters(int id) {
    return testing::CountersOf(nodes_[id - 1].control_address, kToken);
  }

  // Every node replicates over all three, and `done` holds for its counters.
  void WaitForAll(const std::string& what, const std::function<bool(std::map<std::string, uint64_t>&)>& done) {
    for (int id = 1; id <= kNodes; ++id) {
      const absl::Time deadline = absl::Now() + absl::Seconds(30);
      std::map<std::string, uint64_t> c;
      do {
        c = Counters(id);
        if (c["txn.members"] == kNodes && c["node.peers"] >= kNodes - 1 && done(c)) break;
        absl::SleepFor(absl::Milliseconds(50));
      } while (absl::Now() < deadline);
      ASSERT_TRUE(c["txn.members"] == kNodes && done(c))
          << "node " << id << ": " << what << " (log epoch " << c["txn.log_epoch"] << ", durable "
          << c["log.durable_epoch"] << ", lag " << c["log.lag_records"] << ")";
    }
  }

  std::vector<std::string> Driver(std::vector<std::string> args) {
    args.push_back(absl::StrCat("--zk=", zk_->connect_string()));
    args.push_back("--cluster=restart");
    args.push_back(absl::StrCat("--token=", kToken));
    args.push_back("--threads=2");
    return args;
  }

  std::string root_;
  std::unique_ptr<testing::ZooKeeperServer> zk_;
  std::vector<testing::FathomdProcess> nodes_;
};

TEST_F(FathomdZooKeeperRestartTest, EveryRecordAndTheBankTotalComeBackAfterSigkillOfEveryNode) {
  StartAll();
  WaitForAll("a durable log epoch", [](auto& c) { return c["log.durable_epoch"] > 0; });
  const Output loaded = RunYcsb(Driver({"--workload=a", "--seed=3", "-p", absl::StrCat("recordcount=", kRecords),
                                        "-p", "operationcount=2000"}));
  ASSERT_EQ(loaded.exit_code, 0) << loaded.text;
  ASSERT_EQ(Count(loaded, "load [INSERT], Return=OK"), kRecords) << loaded.text;
  const Output bank = RunYcsb(Driver({"--workload=bank", "--fathom_table=bank", "--seed=5", "-p", "recordcount=50",
                                      "-p", "operationcount=500"}));
  ASSERT_EQ(bank.exit_code, 0) << bank.text;
  const int64_t total = Count(bank, "run [BANK], Total");
  ASSERT_GT(total, 0) << bank.text;
  ASSERT_EQ(total, Count(bank, "run [BANK], ExpectedTotal")) << bank.text;

  // Everything acknowledged is in an epoch every log has closed on disk.
  const uint64_t written_in = Counters(1)["txn.log_epoch"];
  WaitForAll("the writes' epoch durable", [&](auto& c) { return c["log.durable_epoch"] >= written_in; });
  for (testing::FathomdProcess& node : nodes_) node.process->Signal(SIGKILL);
  for (testing::FathomdProcess& node : nodes_) node.process->Wait(absl::Seconds(10)).IgnoreError();

  StartAll();
  uint64_t restored = 0;
  for (int id = 1; id <= kNodes; ++id) restored += Counters(id)["restart.primaries"];
  EXPECT_GT(restored, static_cast<uint64_t>(kRecords));
  WaitForAll("log epochs running again", [](auto& c) { return c["log.durable_epoch"] > 0; });

  const Output read = RunYcsb(Driver({"--workload=c", "--phase=run", "--seed=9", "-p",
                                      absl::StrCat("recordcount=", kRecords), "-p", "operationcount=3000"}));
  ASSERT_EQ(read.exit_code, 0) << read.text;
  EXPECT_EQ(Count(read, "run [READ], Return=OK"), 3000) << read.text;
  EXPECT_FALSE(absl::StrContains(read.text, "Return=NOT_FOUND")) << read.text;
  const Output bank_again = RunYcsb(Driver({"--workload=bank", "--fathom_table=bank", "--phase=run", "--seed=7", "-p",
                                            "recordcount=50", "-p", "operationcount=200"}));
  ASSERT_EQ(bank_again.exit_code, 0) << bank_again.text;
  EXPECT_EQ(Count(bank_again, "run [BANK], Total"), total) << bank_again.text;
}

// A member that does not come back: the others wait for it up to --join_timeout, then stop, saying whom
// they waited for; nothing is served from a partial set of logs.
TEST_F(FathomdZooKeeperRestartTest, AMemberThatDoesNotComeBackStopsTheRestartWithAClearError) {
  StartAll();
  WaitForAll("a durable log epoch", [](auto& c) { return c["log.durable_epoch"] > 0; });
  for (testing::FathomdProcess& node : nodes_) node.process->Signal(SIGKILL);
  for (testing::FathomdProcess& node : nodes_) node.process->Wait(absl::Seconds(10)).IgnoreError();
  std::vector<std::string> flags = NodeFlags(1);
  flags.push_back("--join_timeout=3s");
  auto exit = testing::RunFathomdToExit(1, flags, root_ + "/node1.stderr");
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->exit_code, 1) << exit->stderr_text;
  EXPECT_EQ(exit->stdout_line, "");
  EXPECT_TRUE(absl::StrContains(exit->stderr_text, "the log's members [1,2,3] did not all come back"))
      << exit->stderr_text;
}

}  // namespace
}  // namespace fathom
