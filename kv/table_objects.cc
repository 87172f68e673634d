#include "kv/table_objects.h"

#include <algorithm>
#include <bit>

#include "absl/strings/str_cat.h"
#include "platform/base/status_macros.h"
#include "platform/memory/region_map.h"
#include "platform/node/control/table_name.h"
#include "platform/memory/size_classes.h"

namespace fathom::kv {
namespace {

constexpr int kObjectsPerTransaction = 64;  // keeps each commit's records small
// 8 KiB of references per chunk object: a chunk is written by one transaction, whose records must fit
// one ring message (a quarter of a 64 KiB ring). With a 4 KiB root, a table has at most ~127k buckets.
constexpr uint32_t kBucketsPerChunk = 512;

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
  if (const uint64_t chunks = (o.buckets + kBucketsPerChunk - 1) / kBucketsPerChunk;
      kRootHeaderBytes + chunks * kRefBytes > kRootCapacity - object::kHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat("a kv table of ", o.buckets, " buckets is too large for its root"));
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
      kBucketHeaderBytes + kSlotsPerBucket * (kEntryHeaderBytes + std::max<size_t>(inline_bytes, kPointerBytes));
  return static_cast<uint32_t>(std::bit_ceil(payload + object::kHeaderBytes));
}

absl::Status FreeAll(txn::TransactionService& txns, const std::vector<object::ObjectRef>& refs, bool values) {
  for (size_t at = 0; at < refs.size(); at += kObjectsPerTransaction) {
    std::vector<object::ObjectRef> batch(refs.begin() + at,
                                         refs.begin() + std::min(refs.size(), at + kObjectsPerTransaction));
    RETURN_IF_ERROR(txn::RunTransaction(txns, [&](txn::Transaction& tx) -> absl::Status {
      if (values) {
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

absl::Status FreeGeneration(txn::TransactionService& txns, const TableState& state, bool values) {
  RETURN_IF_ERROR(FreeAll(txns, state.bucket_refs, values));
  std::vector<object::ObjectRef> rest = state.root.chunks;
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
  root.bucket_capacity = BucketCapacity(root.inline_bytes);
  root.buckets_per_chunk = kBucketsPerChunk;
  root.chunks.clear();
  const size_t chunks = (root.buckets + kBucketsPerChunk - 1) / kBucketsPerChunk;
  if (kRootHeaderBytes + chunks * kRefBytes > kRootCapacity - object::kHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat("kv table of ", root.buckets, " buckets is too large"));
  }
  auto state = std::make_shared<TableState>();
  state->name = std::move(name);
  ASSIGN_OR_RETURN(state->index, MakeIndex(root.kind, root.buckets));
  Bucket empty;
  empty.epoch = static_cast<uint32_t>(root.epoch);
  const std::string empty_bytes = EncodeBucket(empty);
  // Whatever was made before an error is given back.
  auto fail = [&](absl::Status s) -> absl::Status {
    FreeAll(txns, state->bucket_refs, /*values=*/false).IgnoreError();
    FreeAll(txns, root.chunks, /*values=*/false).IgnoreError();
    return s;
  };

  // Buckets round robin over the members, so load and memory spread evenly.
  std::vector<object::ObjectRef>& buckets = state->bucket_refs;
  buckets.reserve(root.buckets);
  while (buckets.size() < root.buckets) {
    std::vector<object::ObjectRef> batch;
    const size_t base = buckets.size();
    absl::Status s = txn::RunTransaction(txns, [&](txn::Transaction& tx) -> absl::Status {
      batch.clear();
      for (size_t i = base; i < root.buckets && batch.size() < kObjectsPerTransaction; ++i) {
        ASSIGN_OR_RETURN(object::ObjectRef ref,
                         tx.Alloc(root.bucket_capacity - object::kHeaderBytes, {.node = members[i % members.size()]}));
        RETURN_IF_ERROR(tx.Write(ref, empty_bytes));
        batch.push_back(ref);
      }
      return absl::OkStatus();
    });
    if (!s.ok()) return fail(s);
    buckets.insert(buckets.end(), batch.begin(), batch.end());
  }
  for (size_t at = 0; at < buckets.size(); at += kBucketsPerChunk) {
    const std::vector<object::ObjectRef> part(
        buckets.begin() + at, buckets.begin() + std::min<size_t>(buckets.size(), at + kBucketsPerChunk));
    const std::string bytes = EncodeRefs(part);
    object::ObjectRef chunk;
    absl::Status s = txn::RunTransaction(txns, [&](txn::Transaction& tx) -> absl::Status {
      ASSIGN_OR_RETURN(chunk, tx.Alloc(static_cast<uint32_t>(bytes.size())));
      return tx.Write(chunk, bytes);
    });
    if (!s.ok()) return fail(s);
    root.chunks.push_back(chunk);
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
