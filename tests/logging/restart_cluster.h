// Three fathomd processes with data directories (UCX shared memory), and this test process as node 4,
// a coordinator of transactions that holds no data (as in tests/txn/fathomd_txn_test.cc). The cluster can
// be SIGKILLed as a whole and started again from the same directories.
//
//   ASSIGN_OR_RETURN(auto cluster, RestartCluster::Start(root));  // fresh directories under root
//   ... transactions on cluster->client() ...
//   RETURN_IF_ERROR(cluster->WaitForLogsCaughtUp());
//   cluster->KillAll();                                            // SIGKILL every fathomd
//   RETURN_IF_ERROR(cluster->Restart());                           // same directories, same addresses
#ifndef FATHOM_TESTS_LOGGING_RESTART_CLUSTER_H_
#define FATHOM_TESTS_LOGGING_RESTART_CLUSTER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/server.h"
#include "tests/util/subprocess.h"
#include "txn/txn.h"

namespace fathom::testing {

class RestartCluster {
 public:
  static constexpr int kNodes = 3;
  static constexpr char kToken[] = "fathomd-restart-test-token-0123456789";

  // Starts node 1, then 2 and 3 (each joining those before it), with data directories root/node<i>.
  static absl::StatusOr<std::unique_ptr<RestartCluster>> Start(const std::string& root);
  ~RestartCluster();

  // The transaction service of node 4 (this process), in the cluster's current epoch.
  txn::TransactionService& client() { return client_->transactions(); }
  const std::vector<uint32_t>& data_nodes() const { return data_nodes_; }
  std::string data_dir(int node) const;

  // Node `node`'s Stats counters.
  absl::StatusOr<std::map<std::string, uint64_t>> Counters(int node);
  // Waits until the client owes no truncation and every node's log has persisted every state it had been
  // given, with no new state arriving for a while (backups apply and log the last records lazily).
  // Returns each node's persisted position.
  absl::StatusOr<std::map<int, uint64_t>> WaitForLogsCaughtUp(absl::Duration timeout = absl::Seconds(30));

  // SIGKILLs every fathomd and reaps it. Node 4 keeps running (clients may still be using it).
  void KillAll();
  // Stops node 4 (after the clients using client() have stopped).
  void StopClient();
  // Starts every fathomd again at once (each lists both others: a restart gathers every member's log
  // before it serves), waits for their READY lines, and starts node 4 anew in the epoch they report.
  absl::Status Restart();
  uint64_t epoch() const { return epoch_; }

 private:
  RestartCluster() = default;
  std::vector<std::string> Flags(int node) const;
  absl::Status StartClient();

  std::string root_;
  std::vector<uint32_t> data_nodes_ = {1, 2, 3};
  std::map<int, std::string> addresses_;  // node -> control address
  std::map<int, std::unique_ptr<Subprocess>> processes_;
  std::unique_ptr<server::Server> client_;  // node kNodes + 1, a client-only member
  uint64_t epoch_ = 1;
};

}  // namespace fathom::testing

#endif  // FATHOM_TESTS_LOGGING_RESTART_CLUSTER_H_
