// TxnCluster: an embedded cluster (its servers attach the transaction layer to every node), for tests and
// benchmarks; plus the checks every test wants (quiescence, replicas identical to their primaries).
#ifndef FATHOM_TXN_TESTING_TXN_CLUSTER_H_
#define FATHOM_TXN_TESTING_TXN_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/embedded_cluster.h"
#include "txn/txn.h"

namespace fathom::txn::testing {

// The two fabrics the protocol tests run on: UCX shared memory (real) and SimFabric (seeded, with torn
// copies and random delays that reorder operations across endpoints).
// kTcp: UCX over tcp on loopback, where one-sided reads and writes are messages the target serves.
enum class TestFabric { kShm, kSim, kTcp };
const char* TestFabricName(TestFabric fabric);  // "Shm", "Sim", "Tcp": test name suffixes

// 3 nodes x 2 threads with `memory_bytes` each on `fabric` (`seed` drives the simulation).
server::EmbeddedClusterOptions TestClusterOptions(TestFabric fabric, uint64_t seed, uint64_t memory_bytes = 16 << 20);

class TxnCluster {
 public:
  static absl::StatusOr<std::unique_ptr<TxnCluster>> Start(server::EmbeddedClusterOptions options,
                                                           TxnOptions txn = {});
  ~TxnCluster();

  TransactionService& service(uint32_t node) { return *services_.at(node - 1); }
  server::EmbeddedCluster& cluster() { return *cluster_; }
  int size() const { return static_cast<int>(services_.size()); }

  // Waits until no participant keeps a record and no coordinator owes a truncation (DeadlineExceeded).
  absl::Status WaitForQuiescence(absl::Duration timeout = absl::Seconds(20));
  // Every data region's backups are byte-identical to the region (call after WaitForQuiescence).
  absl::Status CheckReplicasIdentical();

 private:
  std::unique_ptr<server::EmbeddedCluster> cluster_;
  std::vector<TransactionService*> services_;  // the servers' layers
};

// Waits until no participant of `services` keeps a record and no coordinator owes a truncation, for 200 ms
// on end (records still in the rings show nowhere) (DeadlineExceeded naming what is left).
absl::Status WaitForQuiescence(const std::vector<TransactionService*>& services, absl::Duration timeout);

}  // namespace fathom::txn::testing

#endif  // FATHOM_TXN_TESTING_TXN_CLUSTER_H_
