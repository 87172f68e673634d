// See table_tx_async.h; and kv::Table inside a caller's asynchronous transaction.
#include "kv/table_tx_async.h"

#include "kv/fetch_at_owner.h"
#include "kv/kv.h"

namespace fathom::kv {

void RunInTransaction(std::shared_ptr<TableHandle> handle, txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx,
                      OpKind kind, std::string key, std::string value,
                      std::function<void(absl::StatusOr<std::string>)> done, MovedWait wait) {
  std::shared_ptr<const TableState> table = handle->current();
  auto run = [handle, &thread, tx, kind, key, value, done, table, wait] {
    RunOperation(table, AsyncOps(thread, tx), kind, key, value,
                 [handle, &thread, tx, kind, key, value, done, table, wait](absl::StatusOr<std::string> r) {
                   if (!IsTableMoved(r.status())) return done(std::move(r));
                   OnTableMoved(
                       thread, handle, table->epoch(), r.status(), wait,
                       [=, &thread](MovedWait w) { RunInTransaction(handle, thread, tx, kind, key, value, done, w); },
                       [done](absl::Status s) { done(s); });
                 });
  };
  // Over tcp: the key's bucket and value object in one round trip, into the read set (fetch_at_owner.h).
  FetchAtOwner(thread, tx, *table, key, std::move(run));
}

void Table::GetAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string_view key,
                     std::function<void(absl::StatusOr<std::string>)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  RunInTransaction(handle_, thread, std::move(tx), OpKind::kGet, std::string(key), {}, std::move(done));
}

void Table::PutAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string key, std::string value,
                     std::function<void(absl::Status)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  if (absl::Status s = CheckValue(value); !s.ok()) return done(s);
  RunInTransaction(handle_, thread, std::move(tx), OpKind::kPut, std::move(key), std::move(value),
             [done = std::move(done)](absl::StatusOr<std::string> r) { done(r.status()); });
}

void Table::DeleteAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string key,
                        std::function<void(absl::Status)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  RunInTransaction(handle_, thread, std::move(tx), OpKind::kDelete, std::move(key), {},
             [done = std::move(done)](absl::StatusOr<std::string> r) { done(r.status()); });
}

}  // namespace fathom::kv
