// Truncator: the lazy TRUNCATE step of one coordinator thread. After a transaction's COMMIT-PRIMARY
// records are in every primary's memory, its id is owed to every replica it wrote records to; ids ride on
// later records to the same node (piggybacked), and a node that gets none soon enough (delay) or owes
// many gets a TRUNCATE record of its own.
#ifndef FATHOM_TXN_TRUNCATOR_H_
#define FATHOM_TXN_TRUNCATOR_H_

#include <cstdint>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/time/time.h"
#include "platform/msg/messenger.h"
#include "txn/records.h"

namespace fathom::txn {

class Truncator {
 public:
  Truncator(absl::Duration delay, size_t batch) : delay_(delay), batch_(batch) {}

  void Add(uint32_t node, uint64_t counter, absl::Time now);
  // Up to `max` ids owed to `node`, to piggyback on a record (give them back with PutBack if the record is
  // never sent).
  std::vector<uint64_t> Take(uint32_t node, size_t max);
  void PutBack(uint32_t node, const std::vector<uint64_t>& counters, absl::Time now);
  // Sends TRUNCATE records (of coordinator `id.node`/`id.thread`) to nodes owed ids for longer than the
  // delay or owed a full batch; a node whose ring is full is tried again next time. Returns records sent.
  size_t Poll(msg::Messenger& messenger, const TxnId& id, absl::Time now);
  size_t pending() const;

 private:
  struct Owed {
    std::vector<uint64_t> counters;
    absl::Time oldest = absl::InfiniteFuture();
  };
  const absl::Duration delay_;
  const size_t batch_;
  absl::btree_map<uint32_t, Owed> owed_;  // ordered: truncations go out in node order, so runs replay
  size_t pending_ = 0;
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_TRUNCATOR_H_
