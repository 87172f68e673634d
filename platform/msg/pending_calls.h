// PendingCalls: the calls a Messenger has made and not yet finished, by request id, with their deadlines.
//
// Ids are never zero and never reused by one table. Calls are taken out before their callback runs, so a
// callback may start new calls. Steady state does not allocate (the hash map and the deadline heap keep
// their capacity; a callback that fits absl::AnyInvocable's inline storage is not boxed).
#ifndef FATHOM_PLATFORM_MSG_PENDING_CALLS_H_
#define FATHOM_PLATFORM_MSG_PENDING_CALLS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fathom::msg {

using NodeId = uint32_t;

// Gets the reply payload (valid during the call only) or the call's failure.
using ReplyCallback = absl::AnyInvocable<void(absl::StatusOr<std::string_view> reply)>;

class PendingCalls {
 public:
  struct Call {
    NodeId peer = 0;
    absl::Time deadline;
    ReplyCallback done;
  };

  // Registers a call and returns its request id.
  uint64_t Add(NodeId peer, absl::Time deadline, ReplyCallback done);
  // Whether `id` is pending, and to which peer.
  std::optional<NodeId> PeerOf(uint64_t id) const;
  // Removes and returns call `id`; nullopt if it is not pending (finished, timed out, or never made).
  std::optional<Call> Take(uint64_t id);
  // Moves every call whose deadline is at or before `now` into `out` (appended).
  void TakeExpired(absl::Time now, std::vector<Call>& out);
  // Moves every call to `peer` into `out`.
  void TakeForPeer(NodeId peer, std::vector<Call>& out);
  void TakeAll(std::vector<Call>& out);

  size_t size() const { return calls_.size(); }
  bool empty() const { return calls_.empty(); }
  // The earliest deadline of a pending call, or InfiniteFuture.
  absl::Time next_deadline();

 private:
  using HeapEntry = std::pair<absl::Time, uint64_t>;  // min-heap on deadline
  void PopFinished();  // drops heap entries whose call is gone
  void RebuildHeapIfBloated();

  uint64_t next_id_ = 1;
  absl::btree_map<uint64_t, Call> calls_;  // ordered: expiries and cancellations run in call order
  std::vector<HeapEntry> heap_;
};

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_PENDING_CALLS_H_
