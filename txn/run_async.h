// Transactions on node threads, retried: the asynchronous counterpart of RunTransaction (txn.h), for code
// that runs on node threads (the KV layer's clients, benchmark drivers) and keeps many transactions in
// flight per thread instead of blocking an application thread per transaction.
//
//   txn::RunTransactionAsync(thread,
//       [&](std::shared_ptr<txn::TxState> tx, txn::DoneCallback body_done) {
//         thread.Read(*tx, ref, [&thread, tx, ref, body_done](absl::StatusOr<std::string> v) {
//           if (!v.ok()) return body_done(v.status());
//           body_done(thread.Write(*tx, ref, Increment(*v)));
//         });
//       },
//       [](absl::Status s) { /* OK, or the first error that is not Aborted, or Aborted after the last try */ });
//
// Everything runs on `thread`; `body` may be called several times (once per attempt), each time with a
// fresh transaction, and must call body_done exactly once. The helper commits after a successful body.
#ifndef FATHOM_TXN_RUN_ASYNC_H_
#define FATHOM_TXN_RUN_ASYNC_H_

#include <functional>
#include <memory>

#include "absl/time/time.h"
#include "txn/txn.h"
#include "txn/txn_thread.h"

namespace fathom::txn {

using AsyncBody = std::function<void(std::shared_ptr<TxState> tx, DoneCallback body_done)>;

// Retries on Aborted (from the body or the commit) after a jittered, doubling backoff, as RunTransaction
// does; options.sleep is not used (the wait keeps the node thread's loop running).
void RunTransactionAsync(TxnThread& thread, AsyncBody body, DoneCallback done, const RetryOptions& options = {});

}  // namespace fathom::txn

#endif  // FATHOM_TXN_RUN_ASYNC_H_
