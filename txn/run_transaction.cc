// RunTransaction: retry on conflicts, with jittered doubling backoff.
#include <optional>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "txn/txn.h"

namespace fathom::txn {

absl::Status RunTransaction(TransactionService& service, absl::FunctionRef<absl::Status(Transaction&)> body,
                            const RetryOptions& options) {
  std::optional<std::mt19937_64> random;  // seeded at the first retry: most transactions never retry
  absl::Duration backoff = options.initial_backoff;
  absl::Status last = absl::AbortedError("no attempt made");
  for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
    if (attempt > 0) {
      if (!random.has_value()) random.emplace(options.seed);
      const absl::Duration wait = backoff * std::uniform_real_distribution<double>(0.5, 1.5)(*random);
      if (options.sleep) {
        options.sleep(wait);
      } else {
        absl::SleepFor(wait);
      }
      backoff = std::min(backoff * 2, options.max_backoff);
    }
    Transaction tx = service.Begin();
    absl::Status s = body(tx);
    if (s.ok()) s = tx.Commit();
    if (!s.ok() && !tx.finished()) tx.Abort();
    if (!absl::IsAborted(s)) return s;
    last = s;
  }
  return absl::AbortedError(absl::StrCat("gave up after ", options.max_attempts, " attempts: ", last.message()));
}

}  // namespace fathom::txn
