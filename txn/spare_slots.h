// SpareSlots: slots a coordinator thread has reserved on other nodes ahead of need, so that a transaction
// allocating there (a KV PUT's new value object) usually takes one at once instead of sending ALLOC and
// waiting for the owner's thread to wake and answer. One ALLOC reserves a batch (records.h AllocRequest);
// the owner keeps them reserved for this node until it allocates them in a commit, releases them, or is
// gone (Participant::ReleaseReservationsOfGone).
//
// Kept per (owner node, size class). Transactions that find none wait for the one request in flight for
// their key; its reply serves them in order and the rest is kept. Owned by one node thread: not
// thread-safe.
//
//   if (auto ref = spares.Take(node, size_class, still_served)) { use *ref; }
//   else if (spares.Wait(node, size_class, done)) { send ALLOC for spares.Asking(node, size_class) slots; }
//   ... on the reply: if (spares.Fill(node, size_class, refs)) { send another ALLOC }
#ifndef FATHOM_TXN_SPARE_SLOTS_H_
#define FATHOM_TXN_SPARE_SLOTS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "platform/object/object_layout.h"

namespace fathom::txn {

class SpareSlots {
 public:
  using Done = std::function<void(absl::StatusOr<object::ObjectRef>)>;
  // Slots asked for at a time when fewer transactions wait (more when more wait, up to kMaxAllocCount).
  static constexpr uint32_t kBatch = 8;

  // A kept slot on `node` of `size_class` for which `still_served(ref)` holds; slots for which it does
  // not (the region moved to another node: recovery) are dropped, not given back: that node no longer
  // serves them.
  std::optional<object::ObjectRef> Take(uint32_t node, int size_class,
                                        const std::function<bool(const object::ObjectRef&)>& still_served);
  // Keeps a slot a transaction took but did not use (it never reached a LOCK).
  void Put(uint32_t node, int size_class, const object::ObjectRef& ref);
  // Forgets every kept slot, not giving them back (their owners freed them: this node left the
  // configuration since they were reserved). Waiters and requests in flight stay. Returns how many.
  size_t DropKept();
  // Queues `done` for the next slot of this key. True if no request is in flight for the key: the caller
  // sends one, for Asking(node, size_class) slots, and hands its outcome to Fill.
  bool Wait(uint32_t node, int size_class, Done done);
  // How many slots the request about to go out should ask for.
  uint32_t Asking(uint32_t node, int size_class) const;
  // The in-flight request's outcome: each waiter in order gets a slot (or the error, every one of them);
  // slots left over are kept. True if waiters remain (a short reply): the caller sends another request.
  bool Fill(uint32_t node, int size_class, absl::StatusOr<std::vector<object::ObjectRef>> refs);

  size_t kept() const;
  size_t waiting() const;

 private:
  struct Key {
    uint32_t node;
    int size_class;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.node, k.size_class);
    }
  };
  struct Pool {
    std::vector<object::ObjectRef> kept;
    std::deque<Done> waiting;
    bool asking = false;
  };
  absl::flat_hash_map<Key, Pool> pools_;
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_SPARE_SLOTS_H_
