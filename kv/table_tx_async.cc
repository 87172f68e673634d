// kv::Table inside a caller's asynchronous transaction: RunOperation over the node thread's TxnOps, with
// no commit (the caller's transaction decides).
#include "kv/kv.h"
#include "kv/operation.h"

namespace fathom::kv {

void Table::GetAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string_view key,
                     std::function<void(absl::StatusOr<std::string>)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  RunOperation(state_, AsyncOps(thread, std::move(tx)), OpKind::kGet, std::string(key), {}, std::move(done));
}

void Table::PutAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string key, std::string value,
                     std::function<void(absl::Status)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  if (absl::Status s = CheckValue(value); !s.ok()) return done(s);
  RunOperation(state_, AsyncOps(thread, std::move(tx)), OpKind::kPut, std::move(key), std::move(value),
               [done = std::move(done)](absl::StatusOr<std::string> r) { done(r.status()); });
}

void Table::DeleteAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string key,
                        std::function<void(absl::Status)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  RunOperation(state_, AsyncOps(thread, std::move(tx)), OpKind::kDelete, std::move(key), {},
               [done = std::move(done)](absl::StatusOr<std::string> r) { done(r.status()); });
}

}  // namespace fathom::kv
