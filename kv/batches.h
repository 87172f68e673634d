// A table's objects are made, rewritten and freed in batches (Table::Create, Resize, Drop): each batch is
// one transaction run on a node thread, several at once over the node's threads. The blocking
// Transaction would wait one round trip to its node thread for every read, write, allocation and free,
// and run one batch at a time (a 120,000-bucket table took 16 s to create and 13 s to freeze that way).
//
//   RETURN_IF_ERROR(RunBatches(txns, batches.size(), [&](size_t i) -> BatchBody {
//     return [refs = batches[i]](txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx,
//                                txn::DoneCallback body_done) { ... body_done(status); };
//   }));
//
// A body runs on a node thread, perhaps several times (RunTransactionAsync retries on Aborted), and
// must own what it touches (copies, shared_ptr): after a timeout the batches run on without the caller.
#ifndef FATHOM_KV_BATCHES_H_
#define FATHOM_KV_BATCHES_H_

#include <cstddef>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "txn/run_async.h"
#include "txn/txn.h"
#include "txn/txn_thread.h"

namespace fathom::kv {

using BatchBody = std::function<void(txn::TxnThread&, std::shared_ptr<txn::TxState>, txn::DoneCallback)>;

struct BatchOptions {
  // Batches in flight at once. Each commit's records take room in the rings to its replicas: a few
  // dozen KiB per batch at most, so 8 stay well within a ring's 64 KiB per peer thread.
  size_t in_flight = 8;
  txn::RetryOptions retry;
  // Given up (DeadlineExceeded) after this long, or 100 ms per batch if that is longer; the batches run
  // on without the caller then.
  absl::Duration timeout = absl::Minutes(2);
};

// Runs batches 0..count-1, body_for(i) each, at most options.in_flight at once, round robin over the
// node's threads, and waits for them (through node thread 0, so a node Executor keeps running them: the
// simulation's clusters do). Not from a node thread. The first error stops new batches from starting and is returned
// once the running ones end; batches that ended well stay committed.
absl::Status RunBatches(txn::TransactionService& txns, size_t count, const std::function<BatchBody(size_t)>& body_for,
                        const BatchOptions& options = {});

}  // namespace fathom::kv

#endif  // FATHOM_KV_BATCHES_H_
