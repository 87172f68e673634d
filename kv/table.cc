// kv::Table: creating, opening and dropping tables, and the blocking and in-transaction operations.
#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "kv/kv.h"
#include "kv/operation.h"
#include "kv/table_moved.h"
#include "kv/table_objects.h"
#include "kv/table_tx_async.h"
#include "kv/thread_views.h"
#include "platform/base/mutex.h"
#include "platform/base/status_macros.h"
#include "platform/memory/size_classes.h"
#include "txn/outcome.h"

namespace fathom::kv {
namespace {

constexpr absl::Duration kBlockingTimeout = absl::Seconds(60);
// A blocking operation rejected by a resize polls the catalog this often, for at most this long.
// The grow check samples this many buckets, after every `interval` blocking puts through a handle
// (an eighth of the table's slots, 1 to 64): the load overshoots the threshold by at most that much.
constexpr uint64_t kLoadSample = 32;

// Runs `start` on one of the node's threads (round robin, as transactions) and waits for what it hands to
// its callback (NodeThread::StartAndWait: a simulation's scheduler runs meanwhile).
template <typename T>
absl::StatusOr<T> OnNodeThread(txn::TransactionService& txns,
                               absl::AnyInvocable<void(txn::TxnThread&, std::function<void(T)>)> start) {
  struct Box {  // T may itself be a StatusOr, which must not become the outer one
    T value;
  };
  const int index = txns.NextThread();
  ASSIGN_OR_RETURN(txn::TxnThread * thread, txns.Thread(index));
  ASSIGN_OR_RETURN(node::NodeThread * node_thread, txns.node().Thread(index));
  absl::StatusOr<Box> result = node_thread->StartAndWait<Box>(
      [thread, start = std::move(start)](std::function<void(absl::StatusOr<Box>)> done) mutable {
        start(*thread, [done](T r) { done(Box{std::move(r)}); });
      },
      kBlockingTimeout);
  if (absl::IsDeadlineExceeded(result.status())) return absl::DeadlineExceededError("kv operation gave no result in time");
  if (!result.ok()) return result.status();
  return std::move(result->value);
}

}  // namespace

absl::StatusOr<Table> Table::Create(txn::TransactionService& txns, Catalog& catalog, std::string name,
                                    TableOptions options) {
  RETURN_IF_ERROR(CheckTableOptions(name, options));
  if (catalog.Find(name).ok()) return absl::AlreadyExistsError(absl::StrCat("kv table \"", name, "\" already exists"));
  Root root;
  root.kind = options.kind;
  root.buckets = options.buckets;
  root.epoch = 1;
  root.max_key_bytes = options.max_key_bytes;
  root.max_value_bytes = options.max_value_bytes;
  root.inline_bytes = options.inline_bytes;
  root.grow_at_permille = static_cast<uint32_t>(options.grow_at_load * 1000 + 0.5);
  ASSIGN_OR_RETURN(std::shared_ptr<TableState> state, BuildGeneration(txns, name, root));
  if (absl::Status added = catalog.Add(state->info()); !added.ok()) {
    // Lost a race for the name: give the objects back.
    FreeGeneration(txns, *state, /*values=*/false).IgnoreError();
    return added;
  }
  return Open(txns, catalog, name);
}

Table::Table(txn::TransactionService* txns, std::shared_ptr<TableHandle> handle, TableOptions options)
    : txns_(txns), handle_(std::move(handle)), views_(std::make_shared<ThreadViews>(handle_, *txns)), options_(options) {}

absl::StatusOr<Table> Table::Open(txn::TransactionService& txns, Catalog& catalog, std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("a kv table needs a name");
  ASSIGN_OR_RETURN(TableInfo info, catalog.Find(name));
  ASSIGN_OR_RETURN(std::shared_ptr<TableState> state, LoadCurrentState(txns, catalog, std::move(info)));
  TableOptions options;
  options.kind = state->root.kind;
  options.buckets = state->root.buckets;
  options.max_key_bytes = state->root.max_key_bytes;
  options.max_value_bytes = state->root.max_value_bytes;
  options.inline_bytes = state->root.inline_bytes;
  options.grow_at_load = state->root.grow_at_permille / 1000.0;
  return Table(&txns, std::make_shared<TableHandle>(&txns, &catalog, std::move(state)), options);
}

absl::Status Table::Drop(txn::TransactionService& txns, Catalog& catalog, std::string_view name) {
  ASSIGN_OR_RETURN(TableInfo info, catalog.Find(name));
  ASSIGN_OR_RETURN(std::shared_ptr<TableState> state, LoadCurrentState(txns, catalog, std::move(info)));
  RETURN_IF_ERROR(catalog.Remove(name));
  return FreeGeneration(txns, *state, /*values=*/true);
}

uint32_t Table::HomeNode(std::string_view key) const {
  std::shared_ptr<const TableState> state = handle_->current();
  const uint32_t region = state->bucket_refs[state->index->Home(KeyHash(key))].address.region;
  absl::StatusOr<uint32_t> primary = txns_->replicas()->PrimaryOf(region);
  return primary.ok() ? *primary : 0;
}

const std::string& Table::name() const { return handle_->name(); }
uint64_t Table::buckets() const { return handle_->current()->root.buckets; }
uint64_t Table::epoch() const { return handle_->current()->epoch(); }
IndexKind Table::kind() const { return options_.kind; }

absl::Status Table::CheckKey(std::string_view key) const {
  if (key.empty()) return absl::InvalidArgumentError("kv keys must not be empty");
  if (key.size() > options_.max_key_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("kv key of ", key.size(), " bytes is over the table's limit of ", options_.max_key_bytes));
  }
  return absl::OkStatus();
}

absl::Status Table::CheckValue(std::string_view value) const {
  if (value.size() > options_.max_value_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("kv value of ", value.size(),
                                                   " bytes is over the table's limit of ", options_.max_value_bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Table::Get(std::string_view key) const {
  RETURN_IF_ERROR(CheckKey(key));
  Table self = *this;
  ASSIGN_OR_RETURN(GetResult r, OnNodeThread<GetResult>(*txns_, [self, key = std::string(key)](
                                                                     txn::TxnThread& t, std::function<void(GetResult)> done) {
                     self.GetAsync(t, key, std::move(done));
                   }));
  return std::move(r.value);
}

absl::Status Table::Put(std::string_view key, std::string_view value) const {
  RETURN_IF_ERROR(CheckKey(key));
  RETURN_IF_ERROR(CheckValue(value));
  auto put = [&] { return RunOwnTransaction(OpKind::kPut, key, value); };
  absl::Status s = put();
  if (options_.grow_at_load <= 0 || !(s.ok() || absl::IsResourceExhausted(s))) return s;
  absl::StatusOr<bool> grew = MaybeGrow(/*full=*/!s.ok());
  if (!s.ok() && grew.ok() && *grew) return put();  // room now
  return s;  // the put's answer; a failed grow check is tried again later
}

absl::StatusOr<bool> Table::MaybeGrow(bool full) const {
  std::shared_ptr<const TableState> state = handle_->current();
  if (!full) {
    const uint64_t interval = std::clamp<uint64_t>(state->root.buckets * kSlotsPerBucket / 8, 1, 64);
    if (handle_->CountPut() % interval != 0) return false;
    // Sample evenly spread buckets in one read-only transaction (no validation: an estimate).
    const uint64_t n = state->root.buckets;
    const uint64_t k = std::min(n, kLoadSample);
    std::vector<object::ObjectRef> sample;
    for (uint64_t i = 0; i < k; ++i) sample.push_back(state->bucket_refs[i * n / k]);
    txn::Transaction tx = txns_->Begin();
    ASSIGN_OR_RETURN(std::vector<std::string> bytes, tx.ReadMany(sample));
    tx.Abort();
    uint64_t entries = 0;
    for (const std::string& b : bytes) entries += b.empty() ? 0 : static_cast<uint8_t>(b[0]);
    if (entries * 1000 < uint64_t{state->root.grow_at_permille} * k * kSlotsPerBucket) return false;
  }
  RETURN_IF_ERROR(Resize(*txns_, handle_->catalog(), handle_->name(), {.buckets = state->root.buckets * 2}));
  return handle_->Refresh(state->epoch());
}

absl::Status Table::Delete(std::string_view key) const {
  RETURN_IF_ERROR(CheckKey(key));
  return RunOwnTransaction(OpKind::kDelete, key, {});
}

absl::Status Table::RunOwnTransaction(OpKind kind, std::string_view key, std::string_view value) const {
  // The node-thread PUT or DELETE (its retries, the fetch at the owner, a resize's wait), handed to one
  // node thread once: a blocking transaction would take two hand-offs (the operation, then the commit).
  Table self = *this;
  absl::StatusOr<absl::Status> result = OnNodeThread<absl::Status>(
      *txns_, [self, kind, key = std::string(key), value = std::string(value)](
                  txn::TxnThread& thread, std::function<void(absl::Status)> done) {
        if (kind == OpKind::kPut) return self.PutAsync(thread, key, value, std::move(done));
        self.DeleteAsync(thread, key, std::move(done));
      });
  // No answer within the wait: the transaction goes on without us, and may commit.
  if (absl::IsDeadlineExceeded(result.status())) return txn::MayHaveCommittedError(result.status());
  if (!result.ok()) return result.status();
  return *result;
}

absl::StatusOr<std::string> Table::RunMovable(txn::Transaction& tx, OpKind kind, std::string_view key,
                                              std::string_view value) const {
  // Whole on the transaction's node thread: one hand-off, and over tcp the fetch at the owner.
  return tx.RunInside(
      [handle = handle_, kind, key = std::string(key), value = std::string(value)](
          txn::TxnThread& thread, std::shared_ptr<txn::TxState> state,
          std::function<void(absl::StatusOr<std::string>)> done) mutable {
        RunInTransaction(std::move(handle), thread, std::move(state), kind, std::move(key), std::move(value),
                         std::move(done));
      },
      kMovedWait);  // a resize's copy may hold it back that long
}

absl::StatusOr<std::string> Table::Get(txn::Transaction& tx, std::string_view key) const {
  RETURN_IF_ERROR(CheckKey(key));
  return RunMovable(tx, OpKind::kGet, key, {});
}

absl::Status Table::Put(txn::Transaction& tx, std::string_view key, std::string_view value) const {
  RETURN_IF_ERROR(CheckKey(key));
  RETURN_IF_ERROR(CheckValue(value));
  return RunMovable(tx, OpKind::kPut, key, value).status();
}

absl::Status Table::Delete(txn::Transaction& tx, std::string_view key) const {
  RETURN_IF_ERROR(CheckKey(key));
  return RunMovable(tx, OpKind::kDelete, key, {}).status();
}

}  // namespace fathom::kv
