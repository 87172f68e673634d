// The YCSB driver against a running cluster: a real ZooKeeper server and three fathomd processes, and
// //bench:ycsb --backend=fathom --zk=... --cluster=... joining them as a client-only member (listed as
// such while it runs, never the manager, the members replicating over the three of them). Workload B
// (load and run) and the bank (transfers, then the conservation check) must count every operation OK;
// afterwards the driver has left the configuration, and the members are the same processes (ids and
// incarnations) with the same region map, every one back to its two peers and still replicating over
// the three of them. A read-only run by a second driver finds every record the first one loaded: the
// data lives on the cluster, not on the client that wrote it.
#include <google/protobuf/struct.pb.h>

#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/ycsb_test_util.h"
#include "gtest/gtest.h"
#include "tests/util/fathomd_process.h"
#include "tests/zookeeper/zookeeper_server.h"
#include "tools/fathomctl/ctl_test_util.h"
#include "tools/fathomctl/json_test_util.h"

namespace fathom {
namespace {

constexpr char kToken[] = "ycsb-cluster-test-token-0123456";
using ::fathom::fathomctl::testing::CtlResult;
using ::fathom::fathomctl::testing::ParseJson;
using ::fathom::fathomctl::testing::RunCtl;
using ::fathom::testing::Count;
using ::fathom::testing::Output;
using ::fathom::testing::RunYcsb;

// What must not change while a client comes and goes.
struct ClusterView {
  std::map<double, std::string> incarnations;  // node id -> incarnation
  std::string regions;                         // the region map, as JSON
  google::protobuf::Struct status;
};

class YcsbClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto zk = testing::ZooKeeperServer::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = std::move(*zk);
    for (int id = 1; id <= 3; ++id) {
      auto node = testing::StartFathomd(
          id, {absl::StrCat("--token=", kToken), "--listen=127.0.0.1:0", "--memory=64M", "--region_size=16M",
               "--threads=2", "--transports=sm", "--cluster=ycsb", absl::StrCat("--zk=", zk_->connect_string()),
               "--zk_session_timeout=4s"});
      ASSERT_TRUE(node.ok()) << node.status();
      nodes_.push_back(std::move(*node));
    }
  }

  // The cluster once every member lists `members` data members and talks to the other two.
  ClusterView Settled(int members) {
    ClusterView view;
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (true) {
      CtlResult r = RunCtl({"status", "--json", absl::StrCat("--zk=", zk_->connect_string()), "--cluster=ycsb",
                            absl::StrCat("--token=", kToken)});
      EXPECT_EQ(r.exit_code, 0) << r.output;
      view.status = ParseJson(r.output);
      const auto& list = view.status.fields().at("members").list_value().values();
      int settled = 0;
      for (const auto& m : list) {
        const auto& stats = m.struct_value().fields().at("stats").struct_value().fields();
        if (!stats.at("reachable").bool_value()) continue;
        const auto& counters = stats.at("counters").struct_value().fields();
        settled += stats.at("peers").number_value() == members - 1 && counters.at("txn.members").number_value() == members;
      }
      if ((list.size() == static_cast<size_t>(members) && settled == members) || absl::Now() > deadline) {
        EXPECT_EQ(settled, members) << r.output;
        break;
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
    for (const auto& m : view.status.fields().at("members").list_value().values()) {
      const auto& f = m.struct_value().fields();
      view.incarnations[f.at("node_id").number_value()] = f.at("incarnation").string_value();
    }
    EXPECT_TRUE(google::protobuf::util::MessageToJsonString(view.status.fields().at("regions"), &view.regions).ok());
    return view;
  }

  std::vector<std::string> Join(std::vector<std::string> args) {
    args.push_back(absl::StrCat("--zk=", zk_->connect_string()));
    args.push_back("--cluster=ycsb");
    args.push_back(absl::StrCat("--token=", kToken));
    args.push_back("--fathom_threads=2");
    return args;
  }

  std::unique_ptr<testing::ZooKeeperServer> zk_;
  std::vector<testing::FathomdProcess> nodes_;
};

TEST_F(YcsbClusterTest, TheDriverJoinsRunsAndLeaves) {
  SKIP_JSON_CHECKS_UNDER_TSAN();
  const ClusterView before = Settled(3);
  ASSERT_EQ(before.incarnations.size(), 3u);

  const Output b = RunYcsb(Join({"--workload=b", "--threads=2", "--seed=7", "-p", "recordcount=500", "-p",
                                 "operationcount=3000"}));
  ASSERT_EQ(b.exit_code, 0) << b.text;
  EXPECT_EQ(Count(b, "load [INSERT], Return=OK"), 500) << b.text;
  const int64_t reads = Count(b, "run [READ], Return=OK");
  const int64_t updates = Count(b, "run [UPDATE], Return=OK");
  EXPECT_EQ(reads + updates, 3000) << b.text;
  EXPECT_GT(reads, 2500);
  EXPECT_GT(updates, 50);
  EXPECT_FALSE(absl::StrContains(b.text, "Return=ERROR")) << b.text;
  EXPECT_FALSE(absl::StrContains(b.text, "Return=NOT_FOUND")) << b.text;

  // While a driver runs it is listed as a client-only member, never the manager, and the members still
  // replicate over the three data members only.
  Output during;
  std::thread driver([&] {
    during = RunYcsb(Join({"--workload=c", "--phase=run", "--threads=2", "--seed=9", "-p", "recordcount=500", "-p",
                           "operationcount=100000"}));
  });
  bool seen = false;
  for (const absl::Time deadline = absl::Now() + absl::Seconds(60); !seen && absl::Now() < deadline;) {
    CtlResult r = RunCtl({"status", "--json", absl::StrCat("--zk=", zk_->connect_string()), "--cluster=ycsb",
                          absl::StrCat("--token=", kToken)});
    const auto status = ParseJson(r.output);
    const auto& members = status.fields().at("members").list_value().values();
    int clients = 0, replicating_over_three = 0;
    for (const auto& m : members) {
      const auto& f = m.struct_value().fields();
      if (f.at("client_only").bool_value()) {
        ++clients;
        EXPECT_FALSE(f.at("manager").bool_value()) << r.output;
        continue;
      }
      const auto& stats = f.at("stats").struct_value().fields();
      replicating_over_three += stats.at("reachable").bool_value() &&
                                stats.at("counters").struct_value().fields().at("txn.members").number_value() == 3;
    }
    seen = members.size() == 4 && clients == 1 && replicating_over_three == 3;
    if (!seen) absl::SleepFor(absl::Milliseconds(50));
  }
  driver.join();
  EXPECT_TRUE(seen) << "never saw the driver as a client-only member";
  ASSERT_EQ(during.exit_code, 0) << during.text;
  EXPECT_EQ(Count(during, "run [READ], Return=OK"), 100000) << during.text;

  // The bank in a table of its own: every transfer commits and the total is kept.
  const Output bank = RunYcsb(Join({"--workload=bank", "--fathom_table=bank", "--threads=2", "--seed=11", "-p",
                                    "recordcount=100", "-p", "operationcount=1000"}));
  ASSERT_EQ(bank.exit_code, 0) << bank.text;
  EXPECT_EQ(Count(bank, "run [TRANSFER], Return=OK"), 1000) << bank.text;
  EXPECT_EQ(Count(bank, "run [BANK], Total"), Count(bank, "run [BANK], ExpectedTotal")) << bank.text;
  EXPECT_GT(Count(bank, "run [BANK], ExpectedTotal"), 0) << bank.text;

  // The clients left; the members are the same processes with the same regions, each back to its two
  // peers and replicating over the three of them.
  const ClusterView after = Settled(3);
  EXPECT_EQ(after.incarnations, before.incarnations);
  EXPECT_EQ(after.regions, before.regions);
  EXPECT_EQ(after.status.fields().at("tables").list_value().values_size(), 2);
  EXPECT_GT(after.status.fields().at("epoch").number_value(), before.status.fields().at("epoch").number_value());

  // Another driver, read-only (workload C, no load): every record the first one wrote is on the cluster.
  const Output c = RunYcsb(Join({"--workload=c", "--phase=run", "--threads=2", "--seed=5", "-p", "recordcount=500",
                                 "-p", "operationcount=2000", "--fathom_clients=app"}));
  ASSERT_EQ(c.exit_code, 0) << c.text;
  EXPECT_EQ(Count(c, "run [READ], Return=OK"), 2000) << c.text;
  EXPECT_EQ(Settled(3).incarnations, before.incarnations);
}

TEST_F(YcsbClusterTest, ClearErrorsWithoutACluster) {
  Output out = RunYcsb({"--workload=b", "--zk=" + zk_->connect_string(), "--cluster=nosuch",
                        absl::StrCat("--token=", kToken), "-p", "recordcount=10"});
  EXPECT_EQ(out.exit_code, 1);
  out = RunYcsb({"--workload=b", "--zk=" + zk_->connect_string(), "--cluster=ycsb", "-p", "recordcount=10"});
  EXPECT_EQ(out.exit_code, 1);  // no token
  // Threads that do not match the members' cannot connect: a bounded, explained failure.
  out = RunYcsb({"--workload=b", "--zk=" + zk_->connect_string(), "--cluster=ycsb", absl::StrCat("--token=", kToken),
                 "--fathom_threads=1", "-p", "recordcount=10"});
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(Settled(3).incarnations.size(), 3u);
}

}  // namespace
}  // namespace fathom
