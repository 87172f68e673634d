#include "kv/table_objects.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/base/status_macros.h"
#include "platform/memory/region_map.h"
#include "platform/node/control/table_name.h"
#include "platform/memory/size_classes.h"
#include "kv/batches.h"

namespace fathom::kv {
namespace {

constexpr int kObjectsPerTransaction = 64;  // keeps each commit's records small
// 8 KiB of references per chunk (and directory) object: each is written by one transaction, whose
// records must fit one ring message (a quarter of a 64 KiB ring). A 4 KiB root holds 250 references:
// chunks up to 128,000 buckets, directories of chunks beyond, up to 65,536,000 buckets (524,288,000 slots).
constexpr uint32_t kBucketsPerChunk = 512;
constexpr uint64_t kMaxBuckets = uint64_t{kMaxRootRefs} * kBucketsPerChunk * kBucketsPerChunk;

// A transaction that allocates objects of `payload_capacity` bytes, object k on `nodes[k]` (0: the
// thread's own node), writes `bytes[k]` into it (bytes[0] into all when there is one), and leaves their
// references in `made` once it commits.
BatchBody MakeObjects(uint32_t payload_capacity, std::vector<uint32_t> nodes,
                      std::shared_ptr<const std::vector<std::string>> bytes,
                      std::shared_ptr<std::vector<object::ObjectRef>> made) {
  return [payload_capacity, nodes = std::move(nodes), bytes, made](
             txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, txn::DoneCallback body_done) {
    struct Attempt {
      std::vector<object::ObjectRef> refs;
      size_t left = 0;
      absl::Status error;
    };
    auto attempt = std::make_shared<Attempt>();
    attempt->refs.resize(nodes.size());
    attempt->left = nodes.size();
    for (size_t k = 0; k < nodes.size(); ++k) {
      thread.Alloc(tx, payload_capacity, nodes[k],
                   [&thread, tx, attempt, k, bytes, made, body_done](absl::StatusOr<object::ObjectRef> ref) {
                     if (!ref.ok()) {
                       attempt->error.Update(ref.status());
                     } else {
                       attempt->refs[k] = *ref;
                       attempt->error.Update(thread.Write(*tx, *ref, (*bytes)[bytes->size() == 1 ? 0 : k]));
                     }
                     if (--attempt->left > 0) return;
                     if (attempt->error.ok()) *made = attempt->refs;  // the last body that succeeded commits
                     body_done(attempt->error);
                   });
    }
  };
}

// Runs `batches` (see MakeObjects) and appends what each made to `out`, in order, also after an error
// (so the caller frees it).
absl::Status RunMakeBatches(txn::TransactionService& txns, const std::vector<BatchBody>& batches,
                            const std::vector<std::shared_ptr<std::vector<object::ObjectRef>>>& made,
                            std::vector<object::ObjectRef>& out) {
  absl::Status s = RunBatches(txns, batches.size(), [&batches](size_t i) { return batches[i]; });
  for (const auto& m : made) out.insert(out.end(), m->begin(), m->end());
  return s;
}

// Writes `refs` into objects of up to kBucketsPerChunk references each (one per transaction: two would
// not fit a commit's message) and appends their references to `made` (also on error, so the caller
// frees them).
absl::Status WriteRefObjects(txn::TransactionService& txns, const std::vector<object::ObjectRef>& refs,
                             std::vector<object::ObjectRef>& made) {
  std::vector<BatchBody> batches;
  std::vector<std::shared_ptr<std::vector<object::ObjectRef>>> outs;
  for (size_t at = 0; at < refs.size(); at += kBucketsPerChunk) {
    auto bytes = std::make_shared<const std::vector<std::string>>(1, EncodeRefs(std::vector<object::ObjectRef>(
        refs.begin() + at, refs.begin() + std::min<size_t>(refs.size(), at + kBucketsPerChunk))));
    outs.push_back(std::make_shared<std::vector<object::ObjectRef>>());
    batches.push_back(MakeObjects(static_cast<uint32_t>((*bytes)[0].size()), {0}, bytes, outs.back()));
  }
  return RunMakeBatches(txns, batches, outs, made);
}

}  // namespace

absl::Status CheckTableOptions(std::string_view name, const TableOptions& o) {
  // The one rule (the control service checks it too): a table made through the API lists like any other.
  RETURN_IF_ERROR(control::ValidateTableName(name));
  if (o.kind != IndexKind::kHopscotch && o.kind != IndexKind::kCuckoo) {
    return absl::InvalidArgumentError("unknown kv index kind");
  }
  if (o.kind == IndexKind::kCuckoo && o.buckets < 3) {
    return absl::InvalidArgumentError(absl::StrCat("a cuckoo kv table has at least 3 buckets, not ", o.buckets));
  }
  if (o.buckets < 2 || o.buckets > kMaxBuckets) {
    return absl::InvalidArgumentError(absl::StrCat("a kv table has 2 to ", kMaxBuckets, " buckets, not ", o.buckets));
  }
  if (o.max_key_bytes == 0 || o.max_key_bytes > UINT16_MAX) {
    return absl::InvalidArgumentError(absl::StrCat("max_key_bytes must be 1..65535, not ", o.max_key_bytes));
  }
  if (uint64_t{4} + o.max_key_bytes + o.max_value_bytes > memory::kMaxSlotBytes - object::kHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat("a key of ", o.max_key_bytes, " bytes and a value of ",
                                                   o.max_value_bytes, " bytes do not fit one object"));
  }
  if (o.inline_bytes > kMaxInlineBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inline_bytes ", o.inline_bytes, " is over ", kMaxInlineBytes, ": a bucket of ", kSlotsPerBucket,
        " such entries would not fit one message (a PUT writes whole buckets; larger values go out of line)"));
  }
  if (!(o.grow_at_load >= 0 && o.grow_at_load <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("grow_at_load must be in [0, 1], not ", o.grow_at_load));
  }
  return absl::OkStatus();
}

static_assert(kBucketHeaderBytes + kSlotsPerBucket * (kEntryHeaderBytes + kMaxInlineBytes) + object::kHeaderBytes ==
              kMaxBucketBytes);

uint32_t BucketCapacity(uint32_t inline_bytes) {
  const size_t payload =
      kBucketHeaderBytes + kSlotsPerBucket * std::max<size_t>(kEntryHeaderBytes + inline_bytes, kPointerEntryBytes);
  return memory::SlotBytes(memory::SizeClassFor(payload + object::kHeaderBytes));
}

absl::Status FreeAll(txn::TransactionService& txns, const std::vector<object::ObjectRef>& refs, bool values) {
  const size_t count = (refs.size() + kObjectsPerTransaction - 1) / kObjectsPerTransaction;
  return RunBatches(txns, count, [&refs, values](size_t i) -> BatchBody {
    const size_t at = i * kObjectsPerTransaction;
    auto batch = std::make_shared<const std::vector<object::ObjectRef>>(
        refs.begin() + at, refs.begin() + std::min(refs.size(), at + kObjectsPerTransaction));
    return [batch, values](txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, txn::DoneCallback body_done) {
      auto free_batch = [&thread, tx, batch]() -> absl::Status {
        for (const object::ObjectRef& ref : *batch) RETURN_IF_ERROR(thread.Free(*tx, ref));
        return absl::OkStatus();
      };
      if (!values) return body_done(free_batch());
      // Buckets: their out-of-line values go too.
      thread.ReadMany(tx, *batch,
                      [&thread, tx, free_batch, body_done](absl::StatusOr<std::vector<std::string>> bytes) {
                        if (!bytes.ok()) return body_done(bytes.status());
                        for (const std::string& b : *bytes) {
                          absl::StatusOr<Bucket> bucket = DecodeBucket(b);
                          if (!bucket.ok()) return body_done(bucket.status());
                          for (const Entry& e : bucket->entries) {
                            if (e.is_inline) continue;
                            if (absl::Status s = thread.Free(*tx, e.ref); !s.ok()) return body_done(s);
                          }
                        }
                        body_done(free_batch());
                      });
    };
  });
}

absl::Status FreeGeneration(txn::TransactionService& txns, const TableState& state, bool values) {
  RETURN_IF_ERROR(FreeAll(txns, state.bucket_refs, values));
  std::vector<object::ObjectRef> rest = state.chunk_refs;
  if (state.root.directory_levels > 0) rest.insert(rest.end(), state.root.chunks.begin(), state.root.chunks.end());
  rest.push_back(state.root_ref);
  return FreeAll(txns, rest, /*values=*/false);
}

absl::StatusOr<std::shared_ptr<TableState>> BuildGeneration(txn::TransactionService& txns, std::string name,
                                                            Root root) {
  // Only members that serve their own memory can take new objects (one back under its id serves none).
  const std::shared_ptr<const memory::RegionMap> map = txns.replicas();
  std::vector<uint32_t> members;
  for (uint32_t member : map->members()) {
    if (map->ServesOwnMemory(member)) members.push_back(member);
  }
  if (members.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("no member serves its own memory to place a kv table on (",
                                                      map->members().size(), " members)"));
  }
  // A resize keeps its table's bucket size if that was larger: a table of format 2 may hold checked
  // pointers (40 bytes) to slots an older build sized, which stay as they are.
  root.bucket_capacity = std::max(root.bucket_capacity, BucketCapacity(root.inline_bytes));
  root.buckets_per_chunk = kBucketsPerChunk;
  root.chunks.clear();
  if (root.buckets < 2 || root.buckets > kMaxBuckets) {
    return absl::InvalidArgumentError(absl::StrCat("a kv table has 2 to ", kMaxBuckets, " buckets, not ", root.buckets));
  }
  root.directory_levels = root.chunk_count() > kMaxRootRefs ? 1 : 0;
  auto state = std::make_shared<TableState>();
  state->name = std::move(name);
  ASSIGN_OR_RETURN(state->index, MakeIndex(root.kind, root.buckets));
  Bucket empty;
  empty.epoch = static_cast<uint32_t>(root.epoch);
  // Whatever was made before an error is given back.
  auto fail = [&](absl::Status s) -> absl::Status {
    FreeAll(txns, state->bucket_refs, /*values=*/false).IgnoreError();
    FreeAll(txns, state->chunk_refs, /*values=*/false).IgnoreError();
    if (root.directory_levels > 0) FreeAll(txns, root.chunks, /*values=*/false).IgnoreError();
    return s;
  };

  // Buckets round robin over the members, so load and memory spread evenly.
  std::vector<object::ObjectRef>& buckets = state->bucket_refs;
  buckets.reserve(root.buckets);
  const auto empty_bytes = std::make_shared<const std::vector<std::string>>(1, EncodeBucket(empty));
  std::vector<BatchBody> batches;
  std::vector<std::shared_ptr<std::vector<object::ObjectRef>>> outs;
  for (uint64_t base = 0; base < root.buckets; base += kObjectsPerTransaction) {
    std::vector<uint32_t> nodes;
    for (uint64_t i = base; i < std::min<uint64_t>(root.buckets, base + kObjectsPerTransaction); ++i) {
      nodes.push_back(members[i % members.size()]);
    }
    outs.push_back(std::make_shared<std::vector<object::ObjectRef>>());
    batches.push_back(MakeObjects(root.bucket_capacity - object::kHeaderBytes, std::move(nodes), empty_bytes, outs.back()));
  }
  if (absl::Status s = RunMakeBatches(txns, batches, outs, buckets); !s.ok()) return fail(s);
  if (absl::Status s = WriteRefObjects(txns, buckets, state->chunk_refs); !s.ok()) return fail(s);
  if (root.directory_levels == 0) {
    root.chunks = state->chunk_refs;
  } else if (absl::Status s = WriteRefObjects(txns, state->chunk_refs, root.chunks); !s.ok()) {
    return fail(s);
  }
  absl::Status s = txn::RunTransaction(txns, [&](txn::Transaction& tx) -> absl::Status {
    ASSIGN_OR_RETURN(state->root_ref, tx.Alloc(kRootCapacity - object::kHeaderBytes));
    return tx.Write(state->root_ref, EncodeRoot(root));
  });
  if (!s.ok()) return fail(s);
  state->root = std::move(root);
  return state;
}

}  // namespace fathom::kv
