#include "tests/util/zk_cluster.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fathom::testing {

absl::StatusOr<ZkCluster> StartZkCluster(int nodes, const std::vector<std::string>& flags) {
  ZkCluster cluster;
  auto zk = ZooKeeperServer::Start();
  if (!zk.ok()) return zk.status();
  cluster.zk = std::move(*zk);
  std::vector<std::string> node_flags = flags;
  node_flags.push_back(absl::StrCat("--zk=", cluster.zk->connect_string()));
  for (int id = 1; id <= nodes; ++id) {
    auto node = StartFathomd(id, node_flags);
    if (!node.ok()) return node.status();
    cluster.nodes.push_back(std::move(*node));
  }
  return cluster;
}

absl::Status WaitForAllMembers(const ZkCluster& cluster, const std::string& token, absl::Duration timeout) {
  const uint64_t n = cluster.nodes.size();
  const absl::Time deadline = absl::Now() + timeout;
  for (const FathomdProcess& node : cluster.nodes) {
    while (true) {
      std::map<std::string, uint64_t> counters = CountersOf(node.control_address, token);
      if (counters["txn.members"] == n && counters["node.peers"] == n - 1) break;
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(absl::StrCat("node at ", node.control_address, " never saw all ", n,
                                                        " members"));
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  return absl::OkStatus();
}

}  // namespace fathom::testing
