// Truncator: the lazy TRUNCATE step of one coordinator thread. After a transaction's COMMIT-PRIMARY
// records are in every primary's memory, its id is owed to every replica it wrote records to; ids ride on
// later records of the same configuration to the same node (piggybacked), and a node that gets none soon
// enough (delay) or owes many gets a TRUNCATE record of its own.
//
// Ids are owed per (node, configuration epoch): a record's truncated counters name transactions of the
// record's own epoch (docs/formats/txn-log.md). An id stays owed until a record carrying it is in the
// node's memory, or the node has left the configuration (its records went with it): a send or a write
// that fails while the node is still a member is tried again, since the replica needs the truncation to
// apply the commit, and so is one the node discarded unread with its connection (SendOptions::on_lost).
#ifndef FATHOM_TXN_TRUNCATOR_H_
#define FATHOM_TXN_TRUNCATOR_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/time/time.h"
#include "platform/msg/messenger.h"
#include "txn/records.h"

namespace fathom::txn {

class Truncator {
 public:
  Truncator(absl::Duration delay, size_t batch) : delay_(delay), batch_(batch) {}

  void Add(uint32_t node, uint64_t epoch, uint64_t counter, absl::Time now);
  // Up to `max` ids of configuration `epoch` owed to `node`, to piggyback on a record of that epoch (give
  // them back with PutBack if the record is never sent).
  std::vector<uint64_t> Take(uint32_t node, uint64_t epoch, size_t max);
  void PutBack(uint32_t node, uint64_t epoch, const std::vector<uint64_t>& counters, absl::Time now);
  // Sends TRUNCATE records of coordinator (`node_id`, `thread`) to nodes owed ids for longer than the delay
  // or owed a full batch, with the coordinator thread's `mark`. A send that fails is tried again a delay later unless `is_member(node)` says the
  // node left, which drops what it was owed. Returns records sent.
  size_t Poll(msg::Messenger& messenger, uint32_t node_id, uint16_t thread, const CoordinatorMark& mark, absl::Time now,
              const std::function<bool(uint32_t node)>& is_member);
  size_t pending() const { return pending_; }

 private:
  struct Owed {
    std::vector<uint64_t> counters;
    absl::Time oldest = absl::InfiniteFuture();
    absl::Time retry_at = absl::InfinitePast();  // after a failed send
  };
  void Drop(Owed& owed, size_t n, absl::Time now);

  const absl::Duration delay_;
  const size_t batch_;
  // By (node, epoch), ordered: truncations go out in node order, so runs replay.
  absl::btree_map<std::pair<uint32_t, uint64_t>, Owed> owed_;
  size_t pending_ = 0;
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_TRUNCATOR_H_
