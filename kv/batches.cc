#include "kv/batches.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "platform/base/status_macros.h"

namespace fathom::kv {
namespace {

// What the batches share; kept alive by every batch's callbacks.
struct Progress {
  absl::Mutex mu;
  std::vector<BatchBody> bodies ABSL_GUARDED_BY(mu);  // started in order
  size_t next ABSL_GUARDED_BY(mu) = 0;
  size_t running ABSL_GUARDED_BY(mu) = 0;
  absl::Status error ABSL_GUARDED_BY(mu);
  bool finished ABSL_GUARDED_BY(mu) = false;
  std::function<void(absl::StatusOr<bool>)> done;  // set before the first batch starts
};

void Start(txn::TransactionService& txns, const std::shared_ptr<Progress>& progress, size_t index, BatchBody body,
           const txn::RetryOptions& retry);

// Called when a batch ends: records its result, starts the next batch if there is one and none failed,
// and reports once the last running batch ended.
void Ended(txn::TransactionService& txns, const std::shared_ptr<Progress>& progress, absl::Status s,
           const txn::RetryOptions& retry) {
  BatchBody next;
  size_t index = 0;
  std::optional<absl::Status> report;
  {
    MutexLock lock(&progress->mu);
    progress->error.Update(s);
    --progress->running;
    if (progress->error.ok() && progress->next < progress->bodies.size()) {
      index = progress->next++;
      next = std::move(progress->bodies[index]);
      ++progress->running;
    } else if (progress->running == 0 && !progress->finished) {
      progress->finished = true;
      report = progress->error;
    }
  }
  if (next) Start(txns, progress, index, std::move(next), retry);
  if (report.has_value()) progress->done(report->ok() ? absl::StatusOr<bool>(true) : *report);
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
  {
    MutexLock lock(&progress->mu);
    progress->bodies.reserve(count);
    for (size_t i = 0; i < count; ++i) progress->bodies.push_back(body_for(i));
  }
  ASSIGN_OR_RETURN(txn::TxnThread * first, txns.Thread(0));
  // Started and awaited through node thread 0, so an Executor that runs the node threads itself (the
  // simulation) runs them while this thread waits. Generous: a batch takes milliseconds.
  const absl::Duration timeout = std::max(options.timeout, absl::Milliseconds(100) * static_cast<double>(count));
  const size_t in_flight = std::max<size_t>(options.in_flight, 1);
  const txn::RetryOptions retry = options.retry;
  absl::StatusOr<bool> ran = first->thread().StartAndWait<bool>(
      [&txns, progress, in_flight, retry](std::function<void(absl::StatusOr<bool>)> done) {
        std::vector<std::pair<size_t, BatchBody>> starting;
        {
          MutexLock lock(&progress->mu);
          progress->done = std::move(done);
          while (progress->next < progress->bodies.size() && progress->running < in_flight) {
            starting.emplace_back(progress->next, std::move(progress->bodies[progress->next]));
            ++progress->next;
            ++progress->running;
          }
        }
        for (auto& [index, body] : starting) Start(txns, progress, index, std::move(body), retry);
      },
      timeout);
  if (!ran.ok() && absl::IsDeadlineExceeded(ran.status())) {
    return absl::DeadlineExceededError(absl::StrCat("a kv table's ", count, " batch transactions did not finish within ",
                                                    absl::FormatDuration(timeout)));
  }
  return ran.status();
}

}  // namespace fathom::kv
