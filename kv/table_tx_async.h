// One kv operation inside a transaction, run on the transaction's node thread: the path of every
// operation on a table inside a transaction, asynchronous (Table::GetAsync/PutAsync/DeleteAsync with a
// TxState) or blocking (Table::Get/Put/Delete with a txn::Transaction, which hands it to its node thread
// whole, so its reads do not each cost a hand-off).
#ifndef FATHOM_KV_TABLE_TX_ASYNC_H_
#define FATHOM_KV_TABLE_TX_ASYNC_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "kv/operation.h"
#include "kv/table_moved.h"
#include "kv/table_state.h"
#include "kv/thread_views.h"
#include "txn/txn.h"

namespace fathom::kv {

// RunOperation in `tx` on the handle's current generation, and again on a newer one if a resize moved
// the table (table_moved.h); over a fabric whose reads the owner's CPU serves (tcp), after fetching the
// key's bucket and value object from their owner in one call (fetch_at_owner.h). On `thread`, which must
// outlive the operation; `done` runs there. No commit: the caller's transaction decides.
void RunInTransaction(std::shared_ptr<TableHandle> handle, txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx,
                      OpKind kind, std::string key, std::string value,
                      std::function<void(absl::StatusOr<std::string>)> done, MovedWait wait = {});
// The same on the generation `view` holds (a node thread's view of the handle: thread_views.h).
void RunInTransaction(ThreadViews::View view, txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, OpKind kind,
                      std::string key, std::string value, std::function<void(absl::StatusOr<std::string>)> done,
                      MovedWait wait = {});

}  // namespace fathom::kv

#endif  // FATHOM_KV_TABLE_TX_ASYNC_H_
