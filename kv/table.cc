// kv::Table: creating, opening and dropping tables, and the blocking and in-transaction operations.
#include <atomic>
#include <optional>

#include "absl/strings/str_cat.h"
#include "kv/kv.h"
#include "kv/operation.h"
#include "platform/base/mutex.h"
#include "platform/base/status_macros.h"
#include "platform/memory/size_classes.h"

namespace fathom::kv {
namespace {

constexpr int kObjectsPerTransaction = 64;  // creation and drop: keeps each commit's records small
// 8 KiB of references per chunk object: a chunk is written by one transaction, whose records must fit
// one ring message (a quarter of a 64 KiB ring). With a 4 KiB root, a table has at most ~127k buckets.
constexpr uint32_t kBucketsPerChunk = 512;
constexpr absl::Duration kBlockingTimeout = absl::Seconds(60);

uint32_t BucketCapacity(uint32_t inline_bytes) {
  const size_t payload =
      kBucketHeaderBytes + kSlotsPerBucket * (kEntryHeaderBytes + std::max<size_t>(inline_bytes, kPointerBytes));
  return static_cast<uint32_t>(std::bit_ceil(payload + object::kHeaderBytes));
}

absl::Status CheckOptions(std::string_view name, const TableOptions& o) {
  if (name.empty()) return absl::InvalidArgumentError("a kv table needs a name");
  if (o.kind != IndexKind::kHopscotch && o.kind != IndexKind::kCuckoo) {
    return absl::InvalidArgumentError("unknown kv index kind");
  }
  if (o.kind == IndexKind::kCuckoo && o.buckets < 3) {
    return absl::InvalidArgumentError(absl::StrCat("a cuckoo kv table has at least 3 buckets, not ", o.buckets));
  }
  if (o.buckets < 2 || o.buckets > (uint64_t{1} << 32)) {
    return absl::InvalidArgumentError(absl::StrCat("a kv table has 2 to 2^32 buckets, not ", o.buckets));
  }
  if (o.max_key_bytes == 0 || o.max_key_bytes > UINT16_MAX) {
    return absl::InvalidArgumentError(absl::StrCat("max_key_bytes must be 1..65535, not ", o.max_key_bytes));
  }
  if (uint64_t{4} + o.max_key_bytes + o.max_value_bytes > memory::kMaxSlotBytes - object::kHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat("a key of ", o.max_key_bytes, " bytes and a value of ",
                                                   o.max_value_bytes, " bytes do not fit one object"));
  }
  if (o.inline_bytes > 16384) {
    return absl::InvalidArgumentError(absl::StrCat("inline_bytes ", o.inline_bytes, " is over 16384"));
  }
  return absl::OkStatus();
}

// Runs `start` on one of the node's threads and waits for what it hands to its callback.
template <typename T>
absl::StatusOr<T> OnNodeThread(txn::TransactionService& txns,
                               absl::AnyInvocable<void(txn::TxnThread&, std::function<void(T)>)> start) {
  struct Shared {
    absl::Mutex mu;
    std::optional<T> result ABSL_GUARDED_BY(mu);
  };
  static std::atomic<uint64_t> next_thread{0};
  auto shared = std::make_shared<Shared>();
  std::function<void(T)> done = [shared](T r) {
    MutexLock lock(&shared->mu);
    if (!shared->result.has_value()) shared->result = std::move(r);
  };
  const int thread = static_cast<int>(next_thread.fetch_add(1, std::memory_order_relaxed) % txns.threads());
  RETURN_IF_ERROR(txns.Post(thread, [start = std::move(start), done](txn::TxnThread& t) mutable { start(t, done); }));
  MutexLock lock(&shared->mu);
  TsanRelease(&shared->mu);
  const bool finished = shared->mu.AwaitWithTimeout(
      absl::Condition(+[](std::optional<T>* r) { return r->has_value(); }, &shared->result), kBlockingTimeout);
  TsanAcquire(&shared->mu);
  if (!finished) return absl::DeadlineExceededError("kv operation gave no result in time");
  return std::move(*shared->result);
}

// Runs an operation over a blocking transaction; its callbacks all run before this returns.
absl::StatusOr<std::string> RunBlocking(std::shared_ptr<const TableState> state, txn::Transaction& tx, OpKind kind,
                                        std::string_view key, std::string_view value) {
  std::optional<absl::StatusOr<std::string>> result;
  RunOperation(std::move(state), BlockingOps(tx), kind, std::string(key), std::string(value),
               [&result](absl::StatusOr<std::string> r) { result = std::move(r); });
  if (!result.has_value()) return absl::InternalError("kv operation did not finish");
  return std::move(*result);
}

absl::StatusOr<std::shared_ptr<TableState>> LoadState(txn::TransactionService& txns, const TableInfo& info) {
  txn::Transaction tx = txns.Begin();
  ASSIGN_OR_RETURN(std::string root_bytes, tx.Read(info.root));
  ASSIGN_OR_RETURN(Root root, DecodeRoot(root_bytes));
  ASSIGN_OR_RETURN(std::vector<std::string> chunks, tx.ReadMany(root.chunks));
  RETURN_IF_ERROR(tx.Commit());  // the root and chunks never change after creation: any snapshot will do
  auto state = std::make_shared<TableState>();
  state->name = info.name;
  state->root_ref = info.root;
  for (const std::string& chunk : chunks) {
    ASSIGN_OR_RETURN(std::vector<object::ObjectRef> refs, DecodeRefs(chunk));
    state->bucket_refs.insert(state->bucket_refs.end(), refs.begin(), refs.end());
  }
  if (state->bucket_refs.size() != root.buckets) {
    return absl::DataLossError(absl::StrCat("kv table ", info.name, ": root says ", root.buckets, " buckets, chunks hold ",
                                            state->bucket_refs.size()));
  }
  if (root.kind != info.kind) {
    return absl::DataLossError(absl::StrCat("kv table ", info.name, ": the catalog says index kind ",
                                            static_cast<int>(info.kind), ", its root ", static_cast<int>(root.kind)));
  }
  ASSIGN_OR_RETURN(state->index, MakeIndex(root.kind, root.buckets));
  state->root = std::move(root);
  return state;
}

// Frees `refs` in transactions of kObjectsPerTransaction (and, for buckets, the value objects they point to).
absl::Status FreeAll(txn::TransactionService& txns, const std::vector<object::ObjectRef>& refs, bool buckets) {
  for (size_t at = 0; at < refs.size(); at += kObjectsPerTransaction) {
    std::vector<object::ObjectRef> batch(refs.begin() + at,
                                         refs.begin() + std::min(refs.size(), at + kObjectsPerTransaction));
    RETURN_IF_ERROR(txn::RunTransaction(txns, [&](txn::Transaction& tx) -> absl::Status {
      if (buckets) {
        ASSIGN_OR_RETURN(std::vector<std::string> bytes, tx.ReadMany(batch));
        for (const std::string& b : bytes) {
          ASSIGN_OR_RETURN(Bucket bucket, DecodeBucket(b));
          for (const Entry& e : bucket.entries) {
            if (!e.is_inline) RETURN_IF_ERROR(tx.Free(e.ref));
          }
        }
      }
      for (const object::ObjectRef& ref : batch) RETURN_IF_ERROR(tx.Free(ref));
      return absl::OkStatus();
    }));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Table> Table::Create(txn::TransactionService& txns, Catalog& catalog, std::string name,
                                    TableOptions options) {
  RETURN_IF_ERROR(CheckOptions(name, options));
  if (catalog.Find(name).ok()) return absl::AlreadyExistsError(absl::StrCat("kv table \"", name, "\" already exists"));
  const std::vector<uint32_t> members = txns.replicas()->members();
  if (members.empty()) return absl::FailedPreconditionError("no members to place a kv table on");
  Root root;
  root.kind = options.kind;
  root.buckets = options.buckets;
  root.epoch = 1;
  root.max_key_bytes = options.max_key_bytes;
  root.max_value_bytes = options.max_value_bytes;
  root.inline_bytes = options.inline_bytes;
  root.bucket_capacity = BucketCapacity(options.inline_bytes);
  root.buckets_per_chunk = kBucketsPerChunk;
  Bucket empty;
  empty.epoch = static_cast<uint32_t>(root.epoch);
  const std::string empty_bytes = EncodeBucket(empty);

  // Buckets round robin over the members, so load and memory spread evenly.
  std::vector<object::ObjectRef> buckets;
  buckets.reserve(options.buckets);
  while (buckets.size() < options.buckets) {
    std::vector<object::ObjectRef> batch;
    const size_t base = buckets.size();
    RETURN_IF_ERROR(txn::RunTransaction(txns, [&](txn::Transaction& tx) -> absl::Status {
      batch.clear();
      for (size_t i = base; i < options.buckets && batch.size() < kObjectsPerTransaction; ++i) {
        ASSIGN_OR_RETURN(object::ObjectRef ref,
                         tx.Alloc(root.bucket_capacity - object::kHeaderBytes, {.node = members[i % members.size()]}));
        RETURN_IF_ERROR(tx.Write(ref, empty_bytes));
        batch.push_back(ref);
      }
      return absl::OkStatus();
    }));
    buckets.insert(buckets.end(), batch.begin(), batch.end());
  }
  root.chunks.clear();
  for (size_t at = 0; at < buckets.size(); at += kBucketsPerChunk) {
    const std::vector<object::ObjectRef> part(
        buckets.begin() + at, buckets.begin() + std::min<size_t>(buckets.size(), at + kBucketsPerChunk));
    const std::string bytes = EncodeRefs(part);
    object::ObjectRef chunk;
    RETURN_IF_ERROR(txn::RunTransaction(txns, [&](txn::Transaction& tx) -> absl::Status {
      ASSIGN_OR_RETURN(chunk, tx.Alloc(static_cast<uint32_t>(bytes.size())));
      return tx.Write(chunk, bytes);
    }));
    root.chunks.push_back(chunk);
  }
  object::ObjectRef root_ref;
  RETURN_IF_ERROR(txn::RunTransaction(txns, [&](txn::Transaction& tx) -> absl::Status {
    const std::string bytes = EncodeRoot(root);
    if (bytes.size() > kRootCapacity - object::kHeaderBytes) {
      return absl::InvalidArgumentError(absl::StrCat("kv table of ", root.buckets, " buckets is too large"));
    }
    ASSIGN_OR_RETURN(root_ref, tx.Alloc(kRootCapacity - object::kHeaderBytes));
    return tx.Write(root_ref, bytes);
  }));
  TableInfo info{name, options.kind, root.epoch, root_ref};
  if (absl::Status added = catalog.Add(info); !added.ok()) {
    // Lost a race for the name: give the objects back.
    std::vector<object::ObjectRef> rest = root.chunks;
    rest.push_back(root_ref);
    FreeAll(txns, buckets, /*buckets=*/true).IgnoreError();
    FreeAll(txns, rest, /*buckets=*/false).IgnoreError();
    return added;
  }
  return Open(txns, catalog, name);
}

absl::StatusOr<Table> Table::Open(txn::TransactionService& txns, Catalog& catalog, std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("a kv table needs a name");
  ASSIGN_OR_RETURN(TableInfo info, catalog.Find(name));
  ASSIGN_OR_RETURN(std::shared_ptr<TableState> state, LoadState(txns, info));
  TableOptions options;
  options.kind = state->root.kind;
  options.buckets = state->root.buckets;
  options.max_key_bytes = state->root.max_key_bytes;
  options.max_value_bytes = state->root.max_value_bytes;
  options.inline_bytes = state->root.inline_bytes;
  return Table(&txns, std::move(state), options);
}

absl::Status Table::Drop(txn::TransactionService& txns, Catalog& catalog, std::string_view name) {
  ASSIGN_OR_RETURN(TableInfo info, catalog.Find(name));
  ASSIGN_OR_RETURN(std::shared_ptr<TableState> state, LoadState(txns, info));
  RETURN_IF_ERROR(catalog.Remove(name));
  RETURN_IF_ERROR(FreeAll(txns, state->bucket_refs, /*buckets=*/true));
  std::vector<object::ObjectRef> rest = state->root.chunks;
  rest.push_back(state->root_ref);
  return FreeAll(txns, rest, /*buckets=*/false);
}

uint32_t Table::HomeNode(std::string_view key) const {
  return txn::PrimaryOf(state_->bucket_refs[state_->index->Home(KeyHash(key))].address.region);
}

const std::string& Table::name() const { return state_->name; }
uint64_t Table::buckets() const { return state_->root.buckets; }
IndexKind Table::kind() const { return state_->root.kind; }

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
  return txn::RunTransaction(*txns_, [&](txn::Transaction& tx) { return Put(tx, key, value); });
}

absl::Status Table::Delete(std::string_view key) const {
  RETURN_IF_ERROR(CheckKey(key));
  return txn::RunTransaction(*txns_, [&](txn::Transaction& tx) { return Delete(tx, key); });
}

absl::StatusOr<std::string> Table::Get(txn::Transaction& tx, std::string_view key) const {
  RETURN_IF_ERROR(CheckKey(key));
  return RunBlocking(state_, tx, OpKind::kGet, key, {});
}

absl::Status Table::Put(txn::Transaction& tx, std::string_view key, std::string_view value) const {
  RETURN_IF_ERROR(CheckKey(key));
  RETURN_IF_ERROR(CheckValue(value));
  return RunBlocking(state_, tx, OpKind::kPut, key, value).status();
}

absl::Status Table::Delete(txn::Transaction& tx, std::string_view key) const {
  RETURN_IF_ERROR(CheckKey(key));
  return RunBlocking(state_, tx, OpKind::kDelete, key, {}).status();
}

}  // namespace fathom::kv
