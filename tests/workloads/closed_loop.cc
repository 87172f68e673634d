#include "tests/workloads/closed_loop.h"

#include <algorithm>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "platform/base/mutex.h"
#include "tests/workloads/support.h"

namespace fathom::txn::workloads {
namespace {

// An abort message without the object address, so like aborts count together.
std::string Reason(const absl::Status& status) {
  std::string_view m(status.message().data(), status.message().size());
  if (!m.empty() && m[0] == 'r') {  // "r123+0x40: ..." or "r123+0x40 is ..."
    const size_t space = m.find(' ');
    if (space != std::string_view::npos) m.remove_prefix(space + 1);
  }
  return std::string(m.substr(0, 40));
}

// What all clients report into; the waiting thread sleeps on it.
struct Tally {
  absl::Mutex mu;
  absl::CondVar done;
  int clients_left ABSL_GUARDED_BY(mu) = 0;
  LoadResult result ABSL_GUARDED_BY(mu);
};

// One coordinator thread's share of the load; lives on that thread.
class Client : public std::enable_shared_from_this<Client> {
 public:
  Client(TxnThread& thread, std::shared_ptr<const std::vector<object::ObjectRef>> objects, const LoadSpec& spec,
         uint64_t seed, std::shared_ptr<Tally> tally)
      : thread_(thread), objects_(*objects), keep_objects_(std::move(objects)), spec_(spec), random_(seed),
        tally_(std::move(tally)),
        left_to_start_(spec.commits_per_thread) {}

  void Start() {
    for (int i = 0; i < spec_.depth; ++i) StartOne();
  }

 private:
  struct Attempt {
    std::shared_ptr<TxState> tx;
    std::vector<object::ObjectRef> refs;
    std::vector<int64_t> values;
    absl::Time began;
  };

  void StartOne() {
    if (left_to_start_ == 0) return;
    --left_to_start_;
    ++in_flight_;
    Begin(thread_.clock().Now());
  }

  void Begin(absl::Time began) {
    auto attempt = std::make_shared<Attempt>();
    attempt->tx = thread_.Begin();
    attempt->began = began;
    const int n = spec_.kind == TxnKind::kTransfer ? 2 : spec_.objects;
    std::uniform_int_distribution<size_t> pick(0, objects_.size() - 1);
    while (static_cast<int>(attempt->refs.size()) < n) {
      const object::ObjectRef& ref = objects_[pick(random_)];
      if (std::find(attempt->refs.begin(), attempt->refs.end(), ref) == attempt->refs.end()) {
        attempt->refs.push_back(ref);
      }
    }
    ReadNext(std::move(attempt));
  }

  void ReadNext(std::shared_ptr<Attempt> attempt) {
    if (attempt->values.size() == attempt->refs.size()) return Decide(std::move(attempt));
    auto self = shared_from_this();
    TxState& tx = *attempt->tx;
    thread_.Read(tx, attempt->refs[attempt->values.size()], [self, attempt](absl::StatusOr<std::string> bytes) {
      if (!bytes.ok()) return self->Finished(attempt, bytes.status());
      auto value = DecodeInt(*bytes);
      if (!value.ok()) return self->Finished(attempt, value.status());
      attempt->values.push_back(*value);
      self->ReadNext(attempt);
    });
  }

  void Decide(std::shared_ptr<Attempt> attempt) {
    TxState& tx = *attempt->tx;
    absl::Status s;
    if (spec_.kind == TxnKind::kReadWrite) {
      for (size_t i = 0; i < attempt->refs.size() && s.ok(); ++i) {
        s = thread_.Write(tx, attempt->refs[i], EncodeInt(attempt->values[i] + 1));
      }
    } else if (spec_.kind == TxnKind::kTransfer && attempt->values[0] >= 1) {
      s = thread_.Write(tx, attempt->refs[0], EncodeInt(attempt->values[0] - 1));
      if (s.ok()) s = thread_.Write(tx, attempt->refs[1], EncodeInt(attempt->values[1] + 1));
    }
    if (!s.ok()) return Finished(attempt, s);
    auto self = shared_from_this();
    thread_.Commit(attempt->tx, [self, attempt](absl::Status status) { self->Finished(attempt, status); });
  }

  void Finished(const std::shared_ptr<Attempt>& attempt, const absl::Status& status) {
    if (!attempt->tx->finished) thread_.Abort(*attempt->tx);
    if (absl::IsAborted(status)) {
      ++result_.aborted;
      ++result_.abort_reasons[Reason(status)];
      return Begin(attempt->began);  // the same logical transaction, tried again
    }
    if (status.ok()) {
      ++result_.committed;
      result_.latencies.push_back(thread_.clock().Now() - attempt->began);
    } else {
      ++result_.failed;
      if (result_.first_failure.ok()) result_.first_failure = status;
    }
    --in_flight_;
    if (left_to_start_ > 0) return StartOne();
    if (in_flight_ == 0) Report();
  }

  void Report() {
    MutexLock lock(&tally_->mu);
    LoadResult& total = tally_->result;
    total.committed += result_.committed;
    total.aborted += result_.aborted;
    total.failed += result_.failed;
    if (total.first_failure.ok()) total.first_failure = result_.first_failure;
    for (const auto& [reason, n] : result_.abort_reasons) total.abort_reasons[reason] += n;
    total.latencies.insert(total.latencies.end(), result_.latencies.begin(), result_.latencies.end());
    if (--tally_->clients_left == 0) tally_->done.SignalAll();
  }

  TxnThread& thread_;
  const std::vector<object::ObjectRef>& objects_;
  const std::shared_ptr<const std::vector<object::ObjectRef>> keep_objects_;
  const LoadSpec spec_;
  std::mt19937_64 random_;
  const std::shared_ptr<Tally> tally_;
  int left_to_start_;
  int in_flight_ = 0;
  LoadResult result_;
};

}  // namespace

absl::Duration LoadResult::Percentile(double p) const {
  if (latencies.empty()) return absl::ZeroDuration();
  const size_t index = std::min(latencies.size() - 1, static_cast<size_t>(p * latencies.size()));
  return latencies[index];
}

double LoadResult::commits_per_second() const {
  return elapsed > absl::ZeroDuration() ? committed / absl::ToDoubleSeconds(elapsed) : 0;
}

absl::StatusOr<LoadResult> RunClosedLoop(const std::vector<TransactionService*>& services,
                                         const std::vector<object::ObjectRef>& objects, const LoadSpec& spec) {
  const int needed = spec.kind == TxnKind::kTransfer ? 2 : spec.objects;
  if (needed < 1 || static_cast<int>(objects.size()) < needed || spec.depth < 1) {
    return absl::InvalidArgumentError(absl::StrCat("a load of ", needed, "-object transactions over ",
                                                   objects.size(), " objects, depth ", spec.depth));
  }
  // Shared with the clients, which may outlive a call that times out.
  auto tally = std::make_shared<Tally>();
  auto refs = std::make_shared<const std::vector<object::ObjectRef>>(objects);
  {
    MutexLock lock(&tally->mu);
    for (TransactionService* s : services) tally->clients_left += s->threads();
  }
  const absl::Time start = absl::Now();
  uint64_t client = 0;
  for (TransactionService* service : services) {
    for (int t = 0; t < service->threads(); ++t) {
      const uint64_t seed = spec.seed * 1000003 + ++client;
      absl::Status posted = service->Post(t, [refs, spec, seed, tally](TxnThread& thread) {
        std::make_shared<Client>(thread, refs, spec, seed, tally)->Start();
      });
      if (!posted.ok()) return posted;
    }
  }
  MutexLock lock(&tally->mu);
  const absl::Time deadline = start + spec.timeout;
  while (tally->clients_left > 0) {
    if (WaitWithDeadline(&tally->done, &tally->mu, deadline) && tally->clients_left > 0) {
      return absl::DeadlineExceededError(absl::StrCat("load not finished after ", absl::FormatDuration(spec.timeout),
                                                      "; ", tally->clients_left, " threads still running"));
    }
  }
  LoadResult result = std::move(tally->result);
  result.elapsed = absl::Now() - start;
  std::sort(result.latencies.begin(), result.latencies.end());
  return result;
}

}  // namespace fathom::txn::workloads
