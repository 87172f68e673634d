// "Table moved, retry": the one policy for an operation that a resize rejected (TableMovedError).
//
// The rejected operation wrote nothing. The handle refetches the table's descriptor from the catalog
// (TableHandle::Refresh): if the resize has published the new generation, the operation runs again there
// at once; if not yet (the resize is still copying), it runs again after kMovedPoll, and gives up with
// the rejection once kMovedWait has passed since the first rejection. Every kv path takes this step,
// on a node thread: the node-thread API (lock-free GET, PUT, DELETE) and operations inside a
// transaction, blocking (Table::Get/Put/Delete in a Transaction) or asynchronous (table_tx_async.h).
//
//   MovedWait wait;                                   // one per operation, across its attempts
//   OnTableMoved(thread, handle, table->epoch(), rejection, wait,
//                [..](MovedWait w) { run again with w }, [..](absl::Status s) { give up with s });
#ifndef FATHOM_KV_TABLE_MOVED_H_
#define FATHOM_KV_TABLE_MOVED_H_

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "kv/table_state.h"
#include "txn/txn.h"

namespace fathom::kv {

inline constexpr absl::Duration kMovedPoll = absl::Microseconds(500);
inline constexpr absl::Duration kMovedWait = absl::Seconds(30);

// How long an operation has waited for a resize to publish: set at its first rejection.
struct MovedWait {
  absl::Time give_up = absl::InfiniteFuture();
  // After a rejection at `now` with no newer generation published: whether to poll again.
  bool KeepWaiting(absl::Time now) {
    if (give_up == absl::InfiniteFuture()) give_up = now + kMovedWait;
    return now < give_up;
  }
};

// On node thread `thread` (its injected clock): refreshes `handle` past generation `epoch`, then calls
// `again` on the thread (at once on a newer generation, after kMovedPoll if none is published yet), or
// `fail` with `rejection` (or the refresh's error) once the wait is over.
void OnTableMoved(txn::TxnThread& thread, std::shared_ptr<TableHandle> handle, uint64_t epoch,
                  absl::Status rejection, MovedWait wait, std::function<void(MovedWait)> again,
                  std::function<void(absl::Status)> fail);

}  // namespace fathom::kv

#endif  // FATHOM_KV_TABLE_MOVED_H_
