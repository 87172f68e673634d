// TxState: what a transaction has done so far, kept by its coordinator thread: the read set (address,
// version for validation, and the payload read), the buffered writes, and the slots it reserved for allocations.
#ifndef FATHOM_TXN_TX_STATE_H_
#define FATHOM_TXN_TX_STATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "platform/object/object_layout.h"
#include "txn/records.h"
#include "txn/txn_options.h"

namespace fathom::txn {

struct ReadEntry {
  object::ObjectRef ref;
  uint64_t version = 0;
  // The payload read, so that reading the object again in this transaction costs no round trip and sees
  // the same snapshot. Unset for an entry the kv GET adds for a bucket it read outside the transaction.
  std::optional<std::string> payload;
};

struct BufferedWrite {
  object::ObjectRef ref;
  WriteOp op = WriteOp::kWrite;
  std::string payload;
};

struct TxState {
  int thread = 0;
  // Ordered by address, so every transaction locks in the same order on a primary.
  absl::btree_map<uint64_t, ReadEntry> reads;
  absl::btree_map<uint64_t, BufferedWrite> writes;
  std::vector<object::ObjectRef> reserved;  // slots allocated by this transaction, not yet committed
  bool finished = false;                     // committed or aborted: no more operations
  std::optional<Durability> durability;      // unset: TxnOptions::durability
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_TX_STATE_H_
