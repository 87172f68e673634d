// FoundationDB's Cycle workload: N objects form one ring (each holds the index of the next). A transaction
// reads r -> r2 -> r3 -> r4 and writes r := r3, r2 := r4, r3 := r2, which swaps two links and keeps one
// ring of length N. Any lost update, dirty read or non-serializable interleaving breaks the ring.
#ifndef FATHOM_TXN_WORKLOADS_CYCLE_H_
#define FATHOM_TXN_WORKLOADS_CYCLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "txn/txn.h"

namespace fathom::txn::workloads {

struct CycleOptions {
  // Nodes whose memory holds the workload's objects, round robin (empty: the services' nodes).
  std::vector<uint32_t> data_nodes;
  int nodes_in_ring = 30;
  int clients_per_node = 2;
  int transactions_per_client = 100;
  uint64_t seed = 1;
  RetryOptions retry;
};

struct CycleResult {
  uint64_t committed = 0;
  uint64_t gave_up = 0;
  std::string violation;  // empty if the ring is still one cycle of length N
};

absl::StatusOr<CycleResult> RunCycle(const std::vector<TransactionService*>& services, const CycleOptions& options);

}  // namespace fathom::txn::workloads

#endif  // FATHOM_TXN_WORKLOADS_CYCLE_H_
