// RunTransactionAsync: RunTransaction's retry loop, as callbacks on a node thread.
#include "txn/run_async.h"

#include <algorithm>
#include <optional>
#include <random>

#include "absl/strings/str_cat.h"

namespace fathom::txn {
namespace {

// One call's retry state; kept alive by the callbacks of its current attempt.
class AsyncRetry : public std::enable_shared_from_this<AsyncRetry> {
 public:
  AsyncRetry(TxnThread& thread, AsyncBody body, DoneCallback done, const RetryOptions& options)
      : thread_(thread),
        body_(std::move(body)),
        done_(std::move(done)),
        options_(options),
        backoff_(options.initial_backoff) {}

  void Attempt() {
    ++attempts_;
    std::shared_ptr<TxState> tx = thread_.Begin();
    auto self = shared_from_this();
    body_(tx, [self, tx](absl::Status s) {
      if (!s.ok()) {
        self->thread_.Abort(*tx);
        return self->Finished(s);
      }
      self->thread_.Commit(tx, [self](absl::Status committed) { self->Finished(committed); });
    });
  }

 private:
  void Finished(absl::Status s) {
    if (!absl::IsAborted(s)) return done_(s);
    if (attempts_ >= options_.max_attempts) {
      return done_(absl::AbortedError(absl::StrCat("gave up after ", attempts_, " attempts: ", s.message())));
    }
    if (!random_.has_value()) random_.emplace(options_.seed);
    const absl::Duration wait = backoff_ * std::uniform_real_distribution<double>(0.5, 1.5)(*random_);
    backoff_ = std::min(backoff_ * 2, options_.max_backoff);
    auto self = shared_from_this();
    thread_.After(wait, [self] { self->Attempt(); });
  }

  TxnThread& thread_;
  const AsyncBody body_;
  const DoneCallback done_;
  const RetryOptions options_;
  // Seeded at the first retry: seeding fills 312 words, a cost every transaction paid (2% of a bank
  // transfer's CPU) though most never retry. Same seed, same draws.
  std::optional<std::mt19937_64> random_;
  absl::Duration backoff_;
  int attempts_ = 0;
};

}  // namespace

void RunTransactionAsync(TxnThread& thread, AsyncBody body, DoneCallback done, const RetryOptions& options) {
  if (options.max_attempts < 1) return done(absl::InvalidArgumentError("RetryOptions.max_attempts must be >= 1"));
  std::make_shared<AsyncRetry>(thread, std::move(body), std::move(done), options)->Attempt();
}

}  // namespace fathom::txn
