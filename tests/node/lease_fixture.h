// The fixture of the lease tests: a ZooKeeper server and three fathomd processes with leases.
#ifndef FATHOM_TESTS_NODE_LEASE_FIXTURE_H_
#define FATHOM_TESTS_NODE_LEASE_FIXTURE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/node/control/control_client.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/subprocess.h"
#include "tests/zookeeper/zookeeper_server.h"

namespace fathom {

constexpr char kToken[] = "fathomd-lease-test-token-0123456789";
constexpr int kNodes = 3;

// Three fathomd with --zk, --lease_period=lease_ and --zk_session_timeout=10s (the fixture's server allows
// at most 10 s), started by SetUp.
class FathomdLeaseFixture : public ::testing::Test {
 protected:
  explicit FathomdLeaseFixture(absl::Duration lease) : lease_(lease) {}

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
             "--threads=2", "--transports=sm", "--cluster=leasetest", absl::StrCat("--zk=", zk_->connect_string()),
             "--zk_session_timeout=10s", absl::StrCat("--lease_period=", absl::FormatDuration(lease_)),
             "--lease_channel=true"});
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

  absl::Duration WaitFor(int id, const std::string& what,
                         const std::function<bool(std::map<std::string, uint64_t>&)>& done,
                         absl::Duration timeout = absl::Seconds(30)) {
    const absl::Time start = absl::Now();
    while (absl::Now() - start < timeout) {
      auto counters = Counters(id);
      if (!counters.empty() && done(counters)) return absl::Now() - start;
      absl::SleepFor(absl::Milliseconds(20));
    }
    ADD_FAILURE() << "node " << id << ": " << what << " not reached in " << timeout;
    return absl::InfiniteDuration();
  }

  bool Pings(int from, int to) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      control::PingPeerRequest request;
      request.set_peer_node_id(to);
      request.set_count(20);
      request.set_payload_bytes(32);
      auto pings = clients_[from - 1]->PingPeer(request);
      if (pings.ok() && pings->ok() == 20) return true;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return false;
  }

  void WaitForFullCluster(const std::string& what) {
    for (int id = 1; id <= kNodes; ++id) {
      WaitFor(id, what, [](auto& c) {
        return c["node.peers"] == 2 && c["coordinator.members"] == 3 && c["lease.held"] == 1 &&
               c["coordinator.applied_epoch"] == c["coordinator.epoch"];
      });
    }
  }

  const absl::Duration lease_;
  std::unique_ptr<testing::ZooKeeperServer> zk_;
  std::vector<std::unique_ptr<testing::Subprocess>> processes_;
  std::vector<std::unique_ptr<control::ControlClient>> clients_;
};

}  // namespace fathom

#endif  // FATHOM_TESTS_NODE_LEASE_FIXTURE_H_
