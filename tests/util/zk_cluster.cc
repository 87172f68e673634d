#include "tests/util/zk_cluster.h"

#include "absl/strings/str_cat.h"

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

}  // namespace fathom::testing
