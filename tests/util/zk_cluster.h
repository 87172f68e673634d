// A ZooKeeper server (the test fixture) and fathomd processes that keep their membership in it: what a
// multi-process test of a --zk cluster starts first.
//
//   ASSIGN_OR_RETURN(ZkCluster cluster, StartZkCluster(3, {"--token=...", "--cluster=c", "--threads=2"}));
//   ... cluster.zk->connect_string(), cluster.nodes[0].control_address ...
#ifndef FATHOM_TESTS_UTIL_ZK_CLUSTER_H_
#define FATHOM_TESTS_UTIL_ZK_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/util/fathomd_process.h"
#include "tests/zookeeper/zookeeper_server.h"

namespace fathom::testing {

struct ZkCluster {
  std::unique_ptr<ZooKeeperServer> zk;
  std::vector<FathomdProcess> nodes;  // node i + 1 is nodes[i]
};

// Starts ZooKeeper, then fathomd nodes 1..`nodes`, each with `flags` and --zk, and waits for their READY
// lines. Errors name what did not start.
absl::StatusOr<ZkCluster> StartZkCluster(int nodes, const std::vector<std::string>& flags);

// Waits until every node of `cluster` replicates over all of them (txn.members) and is connected to the
// others (node.peers), as their Stats say: tables are placed on the members a node's transaction layer
// knows. DeadlineExceeded names the node that did not get there.
absl::Status WaitForAllMembers(const ZkCluster& cluster, const std::string& token,
                               absl::Duration timeout = absl::Seconds(60));

}  // namespace fathom::testing

#endif  // FATHOM_TESTS_UTIL_ZK_CLUSTER_H_
