// Three fathomd processes join through ZooKeeper (a real server from the test fixture): they connect to
// each other as the configuration lists them; a killed member leaves the configuration within the session
// timeout plus a bound (reported) and the others drop it; restarted, it joins again; a member paused past
// its session is removed and comes back when resumed; the configuration manager is killed and a new one is
// elected, advancing the configuration.
#include <signal.h>

#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/base/runfiles.h"
#include "platform/node/control/control_client.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/subprocess.h"
#include "tests/zookeeper/zookeeper_server.h"

namespace fathom {
namespace {

constexpr char kToken[] = "fathomd-zk-test-token-0123456789";
constexpr int kNodes = 3;

class FathomdZooKeeperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto zk = testing::ZooKeeperServer::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = std::move(*zk);
    processes_.resize(kNodes);
    clients_.resize(kNodes);
    for (int id = 1; id <= kNodes; ++id) StartNode(id);
  }

  void StartNode(int id) {
    auto node = testing::StartFathomd(
        id, {absl::StrCat("--token=", kToken), "--listen=127.0.0.1:0", "--memory=16M", "--region_size=16M",
             "--threads=2", "--transports=sm", "--cluster=zktest", absl::StrCat("--zk=", zk_->connect_string()),
             "--zk_session_timeout=2s"});
    ASSERT_TRUE(node.ok()) << node.status();
    auto client = testing::ConnectControl(node->control_address, kToken);
    ASSERT_TRUE(client.ok()) << client.status();
    processes_[id - 1] = std::move(node->process);
    clients_[id - 1] = std::move(*client);
  }

  std::map<std::string, uint64_t> Counters(int id) {
    auto stats = clients_[id - 1]->Stats();
    if (!stats.ok()) return {};
    return {stats->counters().begin(), stats->counters().end()};
  }

  // Waits until `done` holds for node `id`'s counters; returns how long it took, or fails the test.
  absl::Duration WaitFor(int id, const std::string& what,
                         const std::function<bool(std::map<std::string, uint64_t>&)>& done) {
    const absl::Time start = absl::Now();
    while (absl::Now() - start < absl::Seconds(30)) {
      auto counters = Counters(id);
      if (!counters.empty() && done(counters)) return absl::Now() - start;
      absl::SleepFor(absl::Milliseconds(50));
    }
    ADD_FAILURE() << "node " << id << ": " << what << " not reached in 30 s";
    return absl::InfiniteDuration();
  }

  bool PingsOnce(int from, int to) {
    control::PingPeerRequest request;
    request.set_peer_node_id(to);
    request.set_count(20);
    request.set_payload_bytes(32);
    auto pings = clients_[from - 1]->PingPeer(request);
    return pings.ok() && pings->ok() == 20;
  }
  // Membership changes reach each node asynchronously: connectivity is eventual, within a bound.
  bool Pings(int from, int to) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (!PingsOnce(from, to)) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return true;
  }
  // Every node lists 3 members, is connected to the 2 others, and has applied the configuration it holds.
  void WaitForFullCluster(const std::string& what) {
    for (int id = 1; id <= kNodes; ++id) {
      WaitFor(id, what, [](auto& c) {
        return c["node.peers"] == 2 && c["coordinator.members"] == 3 &&
               c["coordinator.applied_epoch"] == c["coordinator.epoch"];
      });
    }
  }

  std::unique_ptr<testing::ZooKeeperServer> zk_;
  std::vector<std::unique_ptr<testing::Subprocess>> processes_;
  std::vector<std::unique_ptr<control::ControlClient>> clients_;
};

TEST_F(FathomdZooKeeperTest, MembershipFollowsTheConfiguration) {
  WaitForFullCluster("2 peers");
  for (int from = 1; from <= kNodes; ++from) {
    for (int to = 1; to <= kNodes; ++to) {
      if (from != to) {
        EXPECT_TRUE(Pings(from, to)) << from << "->" << to;
      }
    }
  }
  int manager = 0;
  for (int id = 1; id <= kNodes; ++id) {
    if (Counters(id)["coordinator.manager"] == 1) manager = id;
  }
  ASSERT_NE(manager, 0) << "no configuration manager";
  const int member = manager == 3 ? 2 : 3;
  const int witness = 6 - manager - member;

  // A member killed: it leaves the configuration when its session expires, and the others drop it.
  const uint64_t epoch = Counters(witness)["coordinator.epoch"];
  processes_[member - 1]->Signal(SIGKILL);
  ASSERT_TRUE(processes_[member - 1]->Wait(absl::Seconds(10)).ok());
  const absl::Duration left = WaitFor(witness, "member gone", [&](auto& c) {
    return c["coordinator.members"] == 2 && c["node.peers"] == 1 && c["coordinator.epoch"] > epoch;
  });
  std::cerr << "[ info ] killed member left the configuration and was dropped within " << left
            << " (session timeout 2 s)\n";
  EXPECT_LT(left, absl::Seconds(15));
  EXPECT_TRUE(Pings(manager, witness));

  // Restarted, it joins again and everyone reconnects.
  StartNode(member);
  WaitForFullCluster("3 members again");
  EXPECT_TRUE(Pings(witness, member));
  EXPECT_TRUE(Pings(member, manager));

  // A member paused (SIGSTOP) past its session: removed and dropped, so nothing it sends is heard. Resumed
  // (SIGCONT), it registers again, the others join it, and it resets its stale side of each connection.
  processes_[member - 1]->Signal(SIGSTOP);
  const absl::Duration removed = WaitFor(witness, "paused member removed", [&](auto& c) {
    return c["coordinator.members"] == 2 && c["node.peers"] == 1;
  });
  std::cerr << "[ info ] paused member removed within " << removed << " of SIGSTOP\n";
  processes_[member - 1]->Signal(SIGCONT);
  WaitForFullCluster("paused member back");
  EXPECT_TRUE(Pings(witness, member));
  EXPECT_TRUE(Pings(member, manager));
  EXPECT_TRUE(Pings(manager, member));

  // The configuration manager killed: another is elected and removes it, advancing the epoch.
  const uint64_t before = Counters(witness)["coordinator.epoch"];
  processes_[manager - 1]->Signal(SIGKILL);
  ASSERT_TRUE(processes_[manager - 1]->Wait(absl::Seconds(10)).ok());
  const absl::Duration failover = WaitFor(witness, "new manager", [&](auto& c) {
    return c["coordinator.members"] == 2 && c["coordinator.epoch"] > before;
  });
  int managers = 0;
  for (int id : {member, witness}) managers += Counters(id)["coordinator.manager"] == 1;
  EXPECT_EQ(managers, 1);
  std::cerr << "[ info ] configuration manager killed: new one elected and configuration advanced within "
            << failover << "\n";
  EXPECT_TRUE(Pings(member, witness));

  for (int id : {member, witness}) {
    processes_[id - 1]->Signal(SIGTERM);
    auto status = processes_[id - 1]->Wait(absl::Seconds(30));
    ASSERT_TRUE(status.ok());
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "node " << id;
  }
}

TEST(FathomdZooKeeperStartTest, UnreachableZooKeeperIsAClearError) {
  auto process = testing::Subprocess::Start(
      {fathom::RunfilePath("server/fathomd"), "--node_id=1", absl::StrCat("--token=", kToken),
       "--listen=127.0.0.1:0", "--memory=8M", "--region_size=8M", "--zk=127.0.0.1:1", "--join_timeout=2s"});
  ASSERT_TRUE(process.ok());
  auto status = (*process)->Wait(absl::Seconds(30));
  ASSERT_TRUE(status.ok()) << "fathomd did not give up on an unreachable ZooKeeper";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1);
}

}  // namespace
}  // namespace fathom
