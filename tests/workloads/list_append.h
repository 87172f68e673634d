// The list-append workload (Jepsen/Elle): a few keys, each an object holding a list of integers;
// transactions of 1-4 random micro-ops (append a value unique to the key, or read the whole list) from
// every node. Every attempt is recorded as a history (docs/formats/history.md): ok with what it read,
// info when Commit's error says it may have committed (txn::MayHaveCommitted), fail for any other abort or
// failure (nothing was installed, which the checker then holds the layer to). The history is
// then checked for strict serializability (tests/history).
#ifndef FATHOM_TXN_WORKLOADS_LIST_APPEND_H_
#define FATHOM_TXN_WORKLOADS_LIST_APPEND_H_

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
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

// The pieces, for drivers of other shapes (the simulation's asynchronous chains, tests/sim):
// Each key's object: room for 256 elements.
inline constexpr uint32_t kListBytes = 2048;
std::vector<int64_t> DecodeList(std::string_view bytes);
std::string EncodeList(const std::vector<int64_t>& list);
// Applies `op` to `list` (the key's list as the transaction sees it): a read records it, an append adds.
void ApplyMicroOp(history::MicroOp& op, std::vector<int64_t>& list);
// Draws transactions of 1..max_ops micro-ops over `keys` keys, every appended value unique, never more
// appends to a key than its object holds (counted when drawn: an attempt that fails keeps its room).
// Not thread-safe.
class ListAppendDraws {
 public:
  ListAppendDraws(int keys, int max_ops) : keys_(keys), max_ops_(max_ops), appended_(keys, 0) {}
  std::vector<history::MicroOp> Next(std::mt19937_64& random);

 private:
  const int keys_;
  const int max_ops_;
  std::vector<int> appended_;
  int64_t next_value_ = 1;
};
// The history's outcome of a transaction that ended with `status`: ok, info when it may have committed
// (txn::MayHaveCommitted), fail when it certainly did not (aborted, unavailable, past its deadline).
// Any other error is unexpected: info, and `*unexpected` is set.
history::EventType OutcomeOf(const absl::Status& status, bool* unexpected);

}  // namespace fathom::txn::workloads

#endif  // FATHOM_TXN_WORKLOADS_LIST_APPEND_H_
