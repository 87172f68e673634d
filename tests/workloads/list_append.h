// The list-append workload (Jepsen/Elle): a few keys, each an object holding a list of integers;
// transactions of 1-4 random micro-ops (append a value unique to the key, or read the whole list) from
// every node. Every attempt is recorded as a history (docs/formats/history.md): ok with what it read,
// info when Commit's error says it may have committed (txn::MayHaveCommitted), fail for any other abort or
// failure (nothing was installed, which the checker then holds the layer to). The history is
// then checked for strict serializability (tests/history).
#ifndef FATHOM_TXN_WORKLOADS_LIST_APPEND_H_
#define FATHOM_TXN_WORKLOADS_LIST_APPEND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/history/history.h"
#include "txn/txn.h"

namespace fathom::txn::workloads {

struct ListAppendOptions {
  // Nodes whose memory holds the workload's objects, round robin (empty: the services' nodes).
  std::vector<uint32_t> data_nodes;
  int keys = 6;
  int clients_per_node = 2;
  int transactions_per_client = 60;
  int max_ops = 4;
  uint64_t seed = 1;
};

struct ListAppendResult {
  std::string history;  // JSON lines
  history::CheckResult check;
  uint64_t ok = 0, failed = 0, info = 0;
};

absl::StatusOr<ListAppendResult> RunListAppend(const std::vector<TransactionService*>& services,
                                               const ListAppendOptions& options);

}  // namespace fathom::txn::workloads

#endif  // FATHOM_TXN_WORKLOADS_LIST_APPEND_H_
