// Log epochs on a cluster whose membership comes from ZooKeeper (fathomd --zk --data_dir): the
// configuration manager drives them; a node that joins the running cluster starts closed and catches up
// to the cluster's epoch before it grants a lock; when the manager is SIGKILLed, the next one drives on
// from where the epochs were. The first phases commit transactions (a table create writes buckets on every
// data member) and each waits for the durable epoch, which needs every member's log, to advance.
#include <signal.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/node/control/control_client.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/fresh_dir.h"
#include "tests/util/subprocess.h"
#include "tests/zookeeper/zookeeper_server.h"

namespace fathom {
namespace {

constexpr char kToken[] = "fathomd-zk-epochs-test-token-0123";
constexpr int kNodes = 3;

class FathomdZooKeeperEpochsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FreshTestDir("fathomd_zk_epochs_test", "cluster");
    auto zk = testing::ZooKeeperServer::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = std::move(*zk);
    nodes_.resize(kNodes);
  }

  void StartNode(int id) {
    auto node = testing::StartFathomd(
        id, {absl::StrCat("--token=", kToken), "--listen=127.0.0.1:0", "--memory=16M", "--region_size=16M",
             "--threads=1", "--transports=sm", "--cluster=epochs", absl::StrCat("--zk=", zk_->connect_string()),
             "--zk_session_timeout=2s", absl::StrCat("--data_dir=", root_, "/node", id)});
    ASSERT_TRUE(node.ok()) << node.status();
    nodes_[id - 1] = std::move(*node);
  }

  std::map<std::string, uint64_t> Counters(int id) {
    return testing::CountersOf(nodes_[id - 1].control_address, kToken);
  }

  // Waits until `done` holds for node `id`'s counters (and returns them), or fails the test.
  std::map<std::string, uint64_t> WaitFor(int id, const std::string& what,
                                          const std::function<bool(std::map<std::string, uint64_t>&)>& done) {
    const absl::Time start = absl::Now();
    std::map<std::string, uint64_t> counters;
    while (absl::Now() - start < absl::Seconds(30)) {
      counters = Counters(id);
      if (!counters.empty() && done(counters)) return counters;
      absl::SleepFor(absl::Milliseconds(50));
    }
    ADD_FAILURE() << "node " << id << ": " << what << " not reached in 30 s (log epoch "
                  << counters["txn.log_epoch"] << ", closed " << counters["log.closed_epoch"] << ", durable "
                  << counters["log.durable_epoch"] << ")";
    return counters;
  }

  // Every listed node is a member of a cluster of `members` data members, and every log has made
  // durable an epoch after `after` (so each of them closed it on disk).
  uint64_t WaitForDurableAfter(const std::vector<int>& nodes, size_t members, uint64_t after) {
    uint64_t durable = 0;
    for (int id : nodes) {
      auto counters = WaitFor(id, absl::StrCat(members, " members and an epoch after ", after, " durable"),
                              [&](auto& c) { return c["txn.members"] == members && c["log.durable_epoch"] > after; });
      durable = std::max(durable, counters["log.durable_epoch"]);
    }
    return durable;
  }

  void CreateTable(int through, const std::string& name) {
    control::CreateTableRequest request;
    request.set_name(name);
    request.set_buckets(64);
    // The configuration change may still be reaching the nodes: a create is retried a few times.
    auto client = testing::ConnectControl(nodes_[through - 1].control_address, kToken);
    ASSERT_TRUE(client.ok()) << client.status();
    absl::Status created;
    for (int attempt = 0; attempt < 20; ++attempt) {
      auto response = (*client)->CreateTable(request);
      created = response.status();
      if (created.ok()) return;
      absl::SleepFor(absl::Milliseconds(250));
    }
    ADD_FAILURE() << "creating table " << name << " through node " << through << ": " << created;
  }

  std::string root_;
  std::unique_ptr<testing::ZooKeeperServer> zk_;
  std::vector<testing::FathomdProcess> nodes_;  // node i + 1 is nodes_[i]
};

TEST_F(FathomdZooKeeperEpochsTest, AJoiningNodeCatchesUpAndANewManagerDrivesOn) {
  StartNode(1);
  StartNode(2);
  uint64_t durable = WaitForDurableAfter({1, 2}, 2, 0);
  CreateTable(2, "before_join");

  // Node 3 starts from epoch 1 while the cluster is far past it.
  const uint64_t cluster_epoch = Counters(1)["txn.log_epoch"];
  ASSERT_GT(cluster_epoch, 1u);
  StartNode(3);
  durable = WaitForDurableAfter({1, 2, 3}, 3, durable);
  EXPECT_GE(Counters(3)["txn.log_epoch"], cluster_epoch);
  EXPECT_GE(Counters(3)["log.closed_epoch"], cluster_epoch);
  CreateTable(3, "after_join");  // buckets on all three: node 3 grants locks
  durable = WaitForDurableAfter({1, 2, 3}, 3, durable);

  // The manager drives; killed, the next one takes over after its session ends.
  int manager = 0;
  for (int id = 1; id <= kNodes; ++id) {
    if (Counters(id)["coordinator.manager"] == 1) manager = id;
  }
  ASSERT_NE(manager, 0);
  nodes_[manager - 1].process->Signal(SIGKILL);
  nodes_[manager - 1].process->Wait(absl::Seconds(10)).IgnoreError();
  std::vector<int> rest;
  for (int id = 1; id <= kNodes; ++id) {
    if (id != manager) rest.push_back(id);
  }
  durable = WaitForDurableAfter(rest, 2, durable + 5);
  // Every region here has a replica on the dead manager (1 and 2 back each other up; 3's regions went to
  // the least used, 1). The new manager saw it alive (it granted the others' leases) and its
  // registration vanished without a Leave: its regions go to their backups, and every region that lost
  // a replica gets a new one, filled by its primary. Then a table create, which writes buckets on every
  // member, succeeds (Unavailable while recovery runs); the log epochs go on meanwhile.
  ASSERT_EQ(manager, 1);
  auto client = testing::ConnectControl(nodes_[rest.front() - 1].control_address, kToken);
  ASSERT_TRUE(client.ok()) << client.status();
  control::CreateTableRequest request;
  request.set_name("after_manager_died");
  request.set_buckets(64);
  absl::Status created = (*client)->CreateTable(request).status();
  for (const absl::Time deadline = absl::Now() + absl::Seconds(60);
       absl::IsUnavailable(created) && absl::Now() < deadline;) {
    absl::SleepFor(absl::Milliseconds(200));
    created = (*client)->CreateTable(request).status();
  }
  EXPECT_TRUE(created.ok()) << created;
  WaitForDurableAfter(rest, 2, durable);
  for (int id : rest) EXPECT_EQ(Counters(id)["log.error"], 0u) << "node " << id;
}

}  // namespace
}  // namespace fathom
