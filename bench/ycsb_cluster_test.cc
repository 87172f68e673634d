// The YCSB driver against a running cluster: a real ZooKeeper server and three fathomd processes, and
// //bench:ycsb --backend=fathom --zk=... --cluster=... joining them as a client-only member (listed as
// such while it runs, never the manager, the members replicating over the three of them). Workload B
// (load and run) and the bank (transfers, then the conservation check) must count every operation OK;
// afterwards the driver has left the configuration, and the members are the same processes (ids and
// incarnations) with the same region map, every one back to its two peers and still replicating over
// the three of them. A read-only run by a second driver finds every record the first one loaded: the
// data lives on the cluster, not on the client that wrote it.
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/ycsb_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/zk_cluster.h"
#include "coordinator/zookeeper_coordinator.h"

namespace fathom {
namespace {

constexpr char kToken[] = "ycsb-cluster-test-token-0123456";
using ::fathom::testing::Count;
using ::fathom::testing::Output;
using ::fathom::testing::RunYcsb;

// What must not change while a client comes and goes.
struct ClusterView {
  std::map<uint32_t, uint64_t> incarnations;  // node id -> incarnation
  std::string regions;                        // the region map, serialized
  uint64_t epoch = 0;
  int tables = 0;
};

// The members' own counters through their control service (no JSON: the test also runs under TSan).
std::map<std::string, uint64_t> CountersOf(const coordinator::MemberInfo& member) {
  return testing::CountersOf(member.control_address(), kToken);
}

class YcsbClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = testing::StartZkCluster(
        3, {absl::StrCat("--token=", kToken), "--listen=127.0.0.1:0", "--memory=64M", "--region_size=16M",
            "--threads=2", "--transports=sm", "--cluster=ycsb", "--zk_session_timeout=4s"});
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    zk_ = cluster_.zk.get();
    // An observer of the configuration: it reads and watches, never joins.
    coordinator::ZooKeeperCoordinatorOptions options;
    options.connect_string = zk_->connect_string();
    options.cluster = "ycsb";
    options.token = kToken;  // the cluster's znodes are open to its token's credentials only
    auto observer = coordinator::ZooKeeperCoordinator::Create(options);
    ASSERT_TRUE(observer.ok()) << observer.status();
    observer_ = std::move(*observer);
  }

  // The cluster once it has exactly `members` members, each talking to the others and replicating over
  // all of them.
  ClusterView Settled(int members) {
    ClusterView view;
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (true) {
      auto config = observer_->GetConfiguration();
      int settled = 0;
      if (config.ok() && config->members_size() == members) {
        for (const auto& m : config->members()) {
          std::map<std::string, uint64_t> counters = CountersOf(m);
          settled += !m.client_only() && counters["node.peers"] == static_cast<uint64_t>(members - 1) &&
                     counters["txn.members"] == static_cast<uint64_t>(members);
        }
      }
      if (settled == members || absl::Now() > deadline) {
        EXPECT_EQ(settled, members) << (config.ok() ? coordinator::Summary(*config) : config.status().ToString());
        if (!config.ok()) return view;
        for (const auto& m : config->members()) view.incarnations[m.node_id()] = m.incarnation();
        coordinator::Configuration regions;
        *regions.mutable_regions() = config->regions();
        view.regions = regions.SerializeAsString();
        view.epoch = config->epoch();
        view.tables = config->tables_size();
        return view;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
  }

  std::vector<std::string> Join(std::vector<std::string> args) {
    args.push_back(absl::StrCat("--zk=", zk_->connect_string()));
    args.push_back("--cluster=ycsb");
    args.push_back(absl::StrCat("--token=", kToken));  // threads: the driver asks a member (2)
    return args;
  }

  testing::ZkCluster cluster_;
  testing::ZooKeeperServer* zk_ = nullptr;  // cluster_'s
  std::unique_ptr<coordinator::ZooKeeperCoordinator> observer_;
};

TEST_F(YcsbClusterTest, TheDriverJoinsRunsAndLeaves) {
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
    auto config = observer_->GetConfiguration();
    ASSERT_TRUE(config.ok()) << config.status();
    int clients = 0, replicating_over_three = 0;
    for (const auto& m : config->members()) {
      if (m.client_only()) {
        ++clients;
        EXPECT_NE(m.node_id(), config->manager_id()) << coordinator::Summary(*config);
        continue;
      }
      replicating_over_three += CountersOf(m)["txn.members"] == 3;
    }
    seen = config->members_size() == 4 && clients == 1 && replicating_over_three == 3;
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
  EXPECT_EQ(after.tables, 2);
  EXPECT_GT(after.epoch, before.epoch);

  // Another driver, read-only (workload C, no load): every record the first one wrote is on the cluster.
  const Output c = RunYcsb(Join({"--workload=c", "--phase=run", "--threads=2", "--seed=5", "-p", "recordcount=500",
                                 "-p", "operationcount=2000", "--fathom_clients=app"}));
  ASSERT_EQ(c.exit_code, 0) << c.text;
  EXPECT_EQ(Count(c, "run [READ], Return=OK"), 2000) << c.text;
  EXPECT_EQ(Settled(3).incarnations, before.incarnations);
}

// A load past what the members' memory holds (3 × 64 MiB, two copies of each 10 KB record) ends with a
// non-zero exit and says why: out of memory, on which node, and what to do.
TEST_F(YcsbClusterTest, ALoadPastTheClustersMemoryFailsAndSaysWhy) {
  Settled(3);
  const Output load = RunYcsb(Join({"--workload=a", "--phase=load", "--threads=2", "--seed=3", "-p",
                                    "recordcount=20000", "-p", "fieldcount=10", "-p", "fieldlength=1000"}));
  EXPECT_EQ(load.exit_code, 1) << load.text;
  EXPECT_GT(Count(load, "load [INSERT], Return=OK"), 100) << load.text;
  EXPECT_THAT(load.text, ::testing::HasSubstr("RESOURCE_EXHAUSTED: node ")) << load.text;
  EXPECT_THAT(load.text, ::testing::HasSubstr("all 64 MiB of its 4 region(s)")) << load.text;
  EXPECT_THAT(load.text, ::testing::HasSubstr("is out of memory")) << load.text;
  EXPECT_THAT(load.text, ::testing::HasSubstr("more --memory")) << load.text;
}

TEST_F(YcsbClusterTest, ClearErrorsWithoutACluster) {
  Output out = RunYcsb({"--workload=b", "--zk=" + zk_->connect_string(), "--cluster=nosuch",
                        absl::StrCat("--token=", kToken), "-p", "recordcount=10"});
  EXPECT_EQ(out.exit_code, 1);
  out = RunYcsb({"--workload=b", "--zk=" + zk_->connect_string(), "--cluster=ycsb", "-p", "recordcount=10"});
  EXPECT_EQ(out.exit_code, 1);  // no token
  // A run-only phase does not make the table it would read: it says to load first, and nothing is created.
  out = RunYcsb(Join({"--workload=c", "--phase=run", "--fathom_table=neverloaded", "-p", "recordcount=10"}));
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(Settled(3).tables, 0);
  // Threads that do not match the members' cannot connect: a bounded, explained failure.
  out = RunYcsb({"--workload=b", "--zk=" + zk_->connect_string(), "--cluster=ycsb", absl::StrCat("--token=", kToken),
                 "--fathom_threads=1", "-p", "recordcount=10"});
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(Settled(3).incarnations.size(), 3u);
}

}  // namespace
}  // namespace fathom
