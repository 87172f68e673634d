// The bank workload: accounts spread over the nodes, transfers from every node (several client threads
// each, so every node thread coordinates some), and an auditor whose read-only snapshot transactions must
// always see the same total and no negative balance. Transfers check the balance, so none may go negative.
#ifndef FATHOM_TXN_WORKLOADS_BANK_H_
#define FATHOM_TXN_WORKLOADS_BANK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "platform/object/object_layout.h"
#include "txn/txn.h"

namespace fathom::txn::workloads {

struct BankOptions {
  // Nodes whose memory holds the workload's objects, round robin (empty: the services' nodes).
  std::vector<uint32_t> data_nodes;
  int accounts = 24;
  int64_t initial_balance = 100;
  int64_t max_amount = 40;  // transfers move 1..max_amount
  int clients_per_node = 2;
  // Each client's quota. A client that meets it before the auditor has committed a snapshot goes on, up
  // to 20 times the quota, so that a slow machine (where snapshots lose every race) still checks one
  // snapshot taken while money moves.
  int transfers_per_client = 100;
  uint64_t seed = 1;
  RetryOptions retry;
};

struct BankResult {
  uint64_t transfers = 0;      // committed, money moved
  uint64_t insufficient = 0;   // committed without a move (the balance was too low)
  uint64_t gave_up = 0;        // aborted max_attempts times in a row
  uint64_t audits = 0;         // snapshots that committed
  uint64_t audit_aborts = 0;
  int64_t final_total = 0;
  std::vector<std::string> violations;  // empty when every invariant held
};

// Creates the accounts (through node 1's service), runs the clients and the auditor, then audits once more.
// Errors other than conflicts end the run with that status.
absl::StatusOr<BankResult> RunBank(const std::vector<TransactionService*>& services, const BankOptions& options);

}  // namespace fathom::txn::workloads

#endif  // FATHOM_TXN_WORKLOADS_BANK_H_
