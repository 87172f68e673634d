// See table_tx_async.h; and kv::Table inside a caller's asynchronous transaction.
#include "kv/table_tx_async.h"

#include "kv/fetch_at_owner.h"
#include "kv/kv.h"
#include "kv/thread_views.h"

namespace fathom::kv {

namespace {

// One attempt's arguments, held once for its callbacks: capturing each by value copied the key, the value
// and `done` into every callback, a heap allocation each for a YCSB key.
struct Attempt {
  std::shared_ptr<TableHandle> handle;
  txn::TxnThread& thread;
  std::shared_ptr<txn::TxState> tx;
  OpKind kind;
  std::string key;
  std::string value;
  std::function<void(absl::StatusOr<std::string>)> done;
  MovedWait wait;
  std::shared_ptr<const TableState> table;
};

}  // namespace

void RunInTransaction(std::shared_ptr<TableHandle> handle, txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx,
                      OpKind kind, std::string key, std::string value,
                      std::function<void(absl::StatusOr<std::string>)> done, MovedWait wait) {
  std::shared_ptr<const TableState> table = handle->current();
  RunInTransaction(ThreadViews::View{std::move(handle), std::move(table)}, thread, std::move(tx), kind, std::move(key),
                   std::move(value), std::move(done), wait);
}

void RunInTransaction(ThreadViews::View view, txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, OpKind kind,
                      std::string key, std::string value, std::function<void(absl::StatusOr<std::string>)> done,
                      MovedWait wait) {
  std::shared_ptr<TableHandle> handle = std::move(view.handle);
  std::shared_ptr<const TableState> table = std::move(view.state);
  auto at = std::make_shared<Attempt>(Attempt{std::move(handle), thread, std::move(tx), kind, std::move(key),
                                              std::move(value), std::move(done), wait, std::move(table)});
  auto run = [at] {
    // The key and value are copied: a table move runs the operation again with them.
    RunOperation(at->table, AsyncOps(at->thread, at->tx), at->kind, at->key, at->value,
                 [at](absl::StatusOr<std::string> r) {
                   if (!IsTableMoved(r.status())) return at->done(std::move(r));
                   OnTableMoved(
                       at->thread, at->handle, at->table->epoch(), r.status(), at->wait,
                       [at](MovedWait w) {
                         RunInTransaction(at->handle, at->thread, at->tx, at->kind, at->key, at->value, at->done, w);
                       },
                       [at](absl::Status s) { at->done(s); });
                 });
  };
  // Over tcp: the key's bucket and value object in one round trip, into the read set (fetch_at_owner.h).
  FetchAtOwner(at->thread, at->tx, *at->table, at->key, std::move(run));
}

void Table::GetAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string_view key,
                     std::function<void(absl::StatusOr<std::string>)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  RunInTransaction(views_->For(thread), thread, std::move(tx), OpKind::kGet, std::string(key), {}, std::move(done));
}

void Table::PutAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string key, std::string value,
                     std::function<void(absl::Status)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  if (absl::Status s = CheckValue(value); !s.ok()) return done(s);
  RunInTransaction(views_->For(thread), thread, std::move(tx), OpKind::kPut, std::move(key), std::move(value),
             [done = std::move(done)](absl::StatusOr<std::string> r) { done(r.status()); });
}

void Table::DeleteAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string key,
                        std::function<void(absl::Status)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  RunInTransaction(views_->For(thread), thread, std::move(tx), OpKind::kDelete, std::move(key), {},
             [done = std::move(done)](absl::StatusOr<std::string> r) { done(r.status()); });
}

}  // namespace fathom::kv
