#include "kv/batches.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"

namespace fathom::kv {
namespace {

// What the batches share with the waiting caller; kept alive by every batch's callbacks.
struct Progress {
  absl::Mutex mu;
  absl::CondVar changed;
  std::vector<BatchBody> bodies ABSL_GUARDED_BY(mu);  // filled in order; started in order
  size_t next ABSL_GUARDED_BY(mu) = 0;
  size_t running ABSL_GUARDED_BY(mu) = 0;
  size_t finished ABSL_GUARDED_BY(mu) = 0;
  absl::Status error ABSL_GUARDED_BY(mu);
};

void Start(txn::TransactionService& txns, const std::shared_ptr<Progress>& progress, size_t index, BatchBody body,
           const txn::RetryOptions& retry);

// Called when a batch ends: records its result and starts the next one, if any and no batch failed.
void Ended(txn::TransactionService& txns, const std::shared_ptr<Progress>& progress, absl::Status s,
           const txn::RetryOptions& retry) {
  BatchBody next;
  size_t index = 0;
  {
    MutexLock lock(&progress->mu);
    progress->error.Update(s);
    --progress->running;
    ++progress->finished;
    if (progress->error.ok() && progress->next < progress->bodies.size()) {
      index = progress->next++;
      next = std::move(progress->bodies[index]);
      ++progress->running;
    }
    progress->changed.SignalAll();
  }
  if (next) Start(txns, progress, index, std::move(next), retry);
}

void Start(txn::TransactionService& txns, const std::shared_ptr<Progress>& progress, size_t index, BatchBody body,
           const txn::RetryOptions& retry) {
  absl::Status posted = txns.Post(static_cast<int>(index % txns.threads()),
                                  [&txns, progress, body = std::move(body), retry](txn::TxnThread& thread) {
    txn::RunTransactionAsync(
        thread,
        [&thread, body](std::shared_ptr<txn::TxState> tx, txn::DoneCallback body_done) {
          body(thread, std::move(tx), std::move(body_done));
        },
        [&txns, progress, retry](absl::Status s) { Ended(txns, progress, std::move(s), retry); }, retry);
  });
  if (!posted.ok()) Ended(txns, progress, posted, retry);
}

}  // namespace

absl::Status RunBatches(txn::TransactionService& txns, size_t count, const std::function<BatchBody(size_t)>& body_for,
                        const BatchOptions& options) {
  if (count == 0) return absl::OkStatus();
  auto progress = std::make_shared<Progress>();
  std::vector<std::pair<size_t, BatchBody>> first;
  {
    MutexLock lock(&progress->mu);
    progress->bodies.reserve(count);
    for (size_t i = 0; i < count; ++i) progress->bodies.push_back(body_for(i));
    while (progress->next < count && progress->running < std::max<size_t>(options.in_flight, 1)) {
      first.emplace_back(progress->next, std::move(progress->bodies[progress->next]));
      ++progress->next;
      ++progress->running;
    }
  }
  for (auto& [index, body] : first) Start(txns, progress, index, std::move(body), options.retry);

  MutexLock lock(&progress->mu);
  size_t seen = progress->finished;
  absl::Time stall_at = absl::Now() + options.stall;
  while (progress->running > 0 || (progress->error.ok() && progress->next < count)) {
    if (WaitWithDeadline(&progress->changed, &progress->mu, stall_at) && progress->finished == seen) {
      return absl::DeadlineExceededError(absl::StrCat("no batch of a kv table's ", count, " finished within ",
                                                      absl::FormatDuration(options.stall), " (", progress->finished,
                                                      " done)"));
    }
    if (progress->finished != seen) {
      seen = progress->finished;
      stall_at = absl::Now() + options.stall;
    }
  }
  return progress->error;
}

}  // namespace fathom::kv
