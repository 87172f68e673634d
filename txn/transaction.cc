// Transaction: the blocking API, each call run on the transaction's node thread.
#include <optional>

#include "absl/strings/str_cat.h"
#include "txn/shared.h"
#include "txn/txn.h"

namespace fathom::txn {

Transaction::Transaction(std::shared_ptr<Shared> shared, int thread)
    : shared_(std::move(shared)), thread_(thread), state_(std::make_shared<TxState>()) {
  state_->thread = thread;
}

Transaction::~Transaction() {
  if (state_ != nullptr && !state_->finished) Abort();
}

bool Transaction::finished() const { return state_ == nullptr || state_->finished; }

template <typename T>
absl::StatusOr<T> Transaction::OnThread(
    absl::AnyInvocable<void(TxnThread&, std::function<void(absl::StatusOr<T>)>)> start, absl::Duration extra_wait) {
  TxnThread* t = shared_->threads[thread_].get();
  // Long enough for a commit whose every RPC times out.
  const absl::Duration timeout = shared_->options.rpc_timeout * 2 + absl::Seconds(5) + extra_wait;
  return t->thread().StartAndWait<T>(
      [t, start = std::move(start)](std::function<void(absl::StatusOr<T>)> done) mutable { start(*t, done); },
      timeout);
}

absl::StatusOr<std::string> Transaction::Read(const object::ObjectRef& ref) {
  auto state = state_;
  return OnThread<std::string>([state, ref](TxnThread& t, std::function<void(absl::StatusOr<std::string>)> done) {
    // The callback keeps the state alive for as long as the read can touch it.
    t.Read(*state, ref, [state, done](absl::StatusOr<std::string> r) { done(std::move(r)); });
  });
}

absl::StatusOr<std::string> Transaction::RunInside(InsideStart start, absl::Duration extra_wait) {
  auto state = state_;
  absl::StatusOr<std::string> result = OnThread<std::string>(
      [state, start = std::move(start)](TxnThread& t, std::function<void(absl::StatusOr<std::string>)> done) mutable {
        start(t, state, std::move(done));
      },
      extra_wait);
  // No answer within the wait: the operation may still be running, and must not add its writes to a
  // commit the caller makes without it.
  if (absl::IsDeadlineExceeded(result.status())) Abort();
  return result;
}

absl::StatusOr<std::vector<std::string>> Transaction::ReadMany(const std::vector<object::ObjectRef>& refs) {
  auto state = state_;
  using Values = std::vector<std::string>;
  return OnThread<Values>([state, refs](TxnThread& t, std::function<void(absl::StatusOr<Values>)> done) {
    t.ReadMany(state, refs, std::move(done));
  });
}

absl::Status Transaction::Write(const object::ObjectRef& ref, std::string_view bytes) {
  auto state = state_;
  std::string copy(bytes);
  return OnThread<bool>([state, ref, copy = std::move(copy)](TxnThread& t,
                                                             std::function<void(absl::StatusOr<bool>)> done) {
           absl::Status s = t.Write(*state, ref, copy);
           done(s.ok() ? absl::StatusOr<bool>(true) : s);
         })
      .status();
}

absl::StatusOr<object::ObjectRef> Transaction::Alloc(uint32_t payload_capacity, AllocHint hint) {
  auto state = state_;
  // Near an object: in the memory of the node that serves it (after recovery, maybe not its owner).
  std::optional<object::ObjectRef> near;
  if (hint.near != nullptr) near = *hint.near;
  const uint32_t node = hint.node;
  return OnThread<object::ObjectRef>([state, payload_capacity, near, node](
                                         TxnThread& t, std::function<void(absl::StatusOr<object::ObjectRef>)> done) {
    t.Alloc(state, payload_capacity, near.has_value() ? t.NodeServing(*near) : node, done);
  });
}

absl::Status Transaction::Free(const object::ObjectRef& ref) {
  auto state = state_;
  return OnThread<bool>([state, ref](TxnThread& t, std::function<void(absl::StatusOr<bool>)> done) {
           absl::Status s = t.Free(*state, ref);
           done(s.ok() ? absl::StatusOr<bool>(true) : s);
         })
      .status();
}

void Transaction::SetDurability(Durability durability) {
  // Between calls the node thread does not touch the state (each call waits for its operation).
  if (state_ != nullptr) state_->durability = durability;
}

absl::Status Transaction::Commit() {
  auto state = state_;
  absl::Status s = OnThread<bool>([state](TxnThread& t, std::function<void(absl::StatusOr<bool>)> done) {
                     t.Commit(state, [done](absl::Status s) { done(s.ok() ? absl::StatusOr<bool>(true) : s); });
                   }).status();
  // No answer within the wait: the commit goes on without us, and may commit.
  if (absl::IsDeadlineExceeded(s)) s = MayHaveCommittedError(std::move(s));
  return s;
}

void Transaction::Abort() {
  auto state = state_;
  OnThread<bool>([state](TxnThread& t, std::function<void(absl::StatusOr<bool>)> done) {
    t.Abort(*state);
    done(true);
  }).IgnoreError();
  state_->finished = true;
}

}  // namespace fathom::txn
