#include "kv/format.h"

#include <xxhash.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/base/byte_order.h"
#include "platform/memory/size_classes.h"

namespace fathom::kv {
namespace {

constexpr uint64_t kKeyHashSeed = 0x6b765f6b65795f31;  // "kv_key_1"
constexpr uint64_t kValueSeed = 0x6b765f76616c5f31;    // "kv_val_1"
constexpr uint8_t kInlineKind = 1;
constexpr uint8_t kCheckedPointerKind = 2;
constexpr uint8_t kPointerKind = 3;
constexpr size_t kPointerHeaderBytes = 15;  // a pointer entry's hash, kind, key and value bytes

// Little-endian fields (every supported host is little-endian; docs/formats/kv.md).
void PutRef(std::string& out, const object::ObjectRef& ref) {
  AppendLe<uint64_t>(out, ref.address.raw());
  AppendLe<uint32_t>(out, ref.incarnation);
  AppendLe<uint32_t>(out, ref.capacity);
}

object::ObjectRef GetRef(std::string_view bytes, size_t offset) {
  object::ObjectRef ref;
  ref.address = memory::GlobalAddress::FromRaw(LoadLe<uint64_t>(bytes.data() + offset));
  ref.incarnation = LoadLe<uint32_t>(bytes.data() + offset + 8);
  ref.capacity = LoadLe<uint32_t>(bytes.data() + offset + 12);
  return ref;
}

absl::Status Corrupt(std::string_view what, size_t offset) {
  return absl::DataLossError(absl::StrCat("corrupt kv bucket: ", std::string(what), " at byte ", offset));
}

}  // namespace

uint64_t KeyHash(std::string_view key) { return XXH3_64bits_withSeed(key.data(), key.size(), kKeyHashSeed); }

uint32_t ValueObjectCapacity(uint32_t key_bytes, uint32_t value_bytes) {
  const int size_class = memory::SizeClassFor(uint64_t{object::kHeaderBytes} + 4 + key_bytes + value_bytes);
  return size_class < 0 ? 0 : memory::SlotBytes(size_class);
}

size_t Bucket::EncodedBytes() const {
  size_t n = kBucketHeaderBytes;
  for (const Entry& e : entries) n += e.EncodedBytes();
  return n;
}

std::string EncodeBucket(const Bucket& bucket) {
  std::string out;
  out.reserve(bucket.EncodedBytes());
  AppendLe<uint8_t>(out, static_cast<uint8_t>(bucket.entries.size()));
  AppendLe<uint8_t>(out, bucket.spilled);
  AppendLe<uint8_t>(out, bucket.flags);
  AppendLe<uint8_t>(out, 0);
  AppendLe<uint32_t>(out, bucket.epoch);
  for (const Entry& e : bucket.entries) {
    AppendLe<uint64_t>(out, e.hash);
    if (e.IsShortPointer()) {
      AppendLe<uint8_t>(out, kPointerKind);
      AppendLe<uint16_t>(out, e.key_bytes);
      AppendLe<uint32_t>(out, e.value_bytes);
      AppendLe<uint64_t>(out, e.ref.address.raw());
      AppendLe<uint32_t>(out, e.ref.incarnation);
      continue;
    }
    AppendLe<uint8_t>(out, e.is_inline ? kInlineKind : kCheckedPointerKind);
    AppendLe<uint8_t>(out, 0);
    AppendLe<uint16_t>(out, e.key_bytes);
    AppendLe<uint32_t>(out, e.value_bytes);
    if (e.is_inline) {
      out.append(e.key);
      out.append(e.value);
    } else {
      // Only an older build's pointer to a slot its bytes do not imply gets here, and it came with its
      // checksum (every pointer a PUT makes is short: kv/operation.cc checks the slot it got).
      PutRef(out, e.ref);
      AppendLe<uint64_t>(out, e.checksum.value_or(0));
    }
  }
  return out;
}

namespace {

// An entry's kind, lengths and extent, bounds-checked; `problem` names what is wrong, if anything, and
// `problem_at` where. Cheap enough for the walk past entries that do not match.
struct EntryShape {
  uint8_t kind = 0;
  uint32_t key_bytes = 0;
  uint32_t value_bytes = 0;
  size_t at = 0;    // where the body starts
  size_t next = 0;  // where the following entry starts
  const char* problem = nullptr;
  size_t problem_at = 0;
};

EntryShape ShapeAt(std::string_view bucket, size_t offset) {
  EntryShape e;
  // Every kind of entry is at least kEntryHeaderBytes long.
  if (bucket.size() - offset < kEntryHeaderBytes) {
    e.problem = "short entry";
    e.problem_at = offset;
    return e;
  }
  e.kind = static_cast<uint8_t>(bucket[offset + 8]);
  size_t body;
  if (e.kind == kPointerKind) {
    e.key_bytes = LoadLe<uint16_t>(bucket.data() + offset + 9);
    e.value_bytes = LoadLe<uint32_t>(bucket.data() + offset + 11);
    e.at = offset + kPointerHeaderBytes;
    body = kPointerEntryBytes - kPointerHeaderBytes;
  } else {
    e.key_bytes = LoadLe<uint16_t>(bucket.data() + offset + 10);
    e.value_bytes = LoadLe<uint32_t>(bucket.data() + offset + 12);
    e.at = offset + kEntryHeaderBytes;
    if (e.kind == kInlineKind) {
      body = size_t{e.key_bytes} + e.value_bytes;
    } else if (e.kind == kCheckedPointerKind) {
      body = kPointerBytes;
    } else {
      e.problem = "entry kind";
      e.problem_at = offset + 8;
      return e;
    }
  }
  if (bucket.size() - e.at < body) {
    e.problem = "entry past the end";
    e.problem_at = offset;
    return e;
  }
  e.next = e.at + body;
  return e;
}

// The entry at `offset`, bounds-checked: its key and value or pointer, and where it ends.
absl::StatusOr<RawMatch> EntryAt(std::string_view bucket, size_t offset) {
  const EntryShape shape = ShapeAt(bucket, offset);
  if (shape.problem != nullptr) return Corrupt(shape.problem, shape.problem_at);
  RawMatch m;
  m.offset = offset;
  m.key_bytes = shape.key_bytes;
  m.value_bytes = shape.value_bytes;
  m.next = shape.next;
  m.is_inline = shape.kind == kInlineKind;
  const size_t at = shape.at;
  if (m.is_inline) {
    m.key = bucket.substr(at, m.key_bytes);
    m.value = bucket.substr(at + m.key_bytes, m.value_bytes);
  } else if (shape.kind == kCheckedPointerKind) {
    m.ref = GetRef(bucket, at);
    m.checksum = LoadLe<uint64_t>(bucket.data() + at + kRefBytes);
  } else {
    m.ref.address = memory::GlobalAddress::FromRaw(LoadLe<uint64_t>(bucket.data() + at));
    m.ref.incarnation = LoadLe<uint32_t>(bucket.data() + at + 8);
    m.ref.capacity = ValueObjectCapacity(m.key_bytes, m.value_bytes);
    if (m.ref.capacity == 0) return Corrupt("pointer to no slot size", offset + 9);
  }
  return m;
}

}  // namespace

absl::StatusOr<RawMatch> FindInBucket(std::string_view bucket, uint64_t hash, size_t from) {
  if (bucket.size() < kBucketHeaderBytes) return Corrupt("short header", 0);
  const size_t count = static_cast<uint8_t>(bucket[0]);
  if (count > kSlotsPerBucket) return Corrupt("entry count", 0);
  size_t offset = kBucketHeaderBytes;
  for (size_t i = 0; i < count; ++i) {
    if (bucket.size() - offset < kEntryHeaderBytes) return Corrupt("short entry", offset);
    if (LoadLe<uint64_t>(bucket.data() + offset) == hash && offset >= from) return EntryAt(bucket, offset);
    const EntryShape skipped = ShapeAt(bucket, offset);
    if (skipped.problem != nullptr) return Corrupt(skipped.problem, skipped.problem_at);
    offset = skipped.next;
  }
  return RawMatch{};
}

absl::StatusOr<uint8_t> BucketSpilled(std::string_view bucket) {
  if (bucket.size() < kBucketHeaderBytes) return Corrupt("short header", 0);
  return static_cast<uint8_t>(bucket[1]);
}

absl::StatusOr<uint32_t> BucketEpoch(std::string_view bucket) {
  if (bucket.size() < kBucketHeaderBytes) return Corrupt("short header", 0);
  return LoadLe<uint32_t>(bucket.data() + 4);
}

absl::StatusOr<Bucket> DecodeBucket(std::string_view bytes) {
  if (bytes.size() < kBucketHeaderBytes) return Corrupt("short header", 0);
  Bucket bucket;
  const size_t count = static_cast<uint8_t>(bytes[0]);
  if (count > kSlotsPerBucket) return Corrupt("entry count", 0);
  bucket.spilled = static_cast<uint8_t>(bytes[1]);
  bucket.flags = static_cast<uint8_t>(bytes[2]);
  if ((bucket.flags & ~kBucketFrozen) != 0) return Corrupt("flags", 2);
  if (bytes[3] != 0) return Corrupt("reserved field", 3);
  bucket.epoch = LoadLe<uint32_t>(bytes.data() + 4);
  bucket.entries.reserve(count);
  size_t offset = kBucketHeaderBytes;
  for (size_t i = 0; i < count; ++i) {
    // The same walk and bounds checks as FindInBucket's, one entry at a time.
    auto m = EntryAt(bytes, offset);
    if (!m.ok()) return m.status();
    const uint64_t hash = LoadLe<uint64_t>(bytes.data() + offset);
    const bool short_pointer = static_cast<uint8_t>(bytes[offset + 8]) == kPointerKind;
    if (!short_pointer && bytes[offset + 9] != 0) return Corrupt("reserved entry byte", offset + 9);
    Entry e;
    e.hash = hash;
    e.is_inline = m->is_inline;
    e.key_bytes = static_cast<uint16_t>(m->key_bytes);
    e.value_bytes = m->value_bytes;
    if (e.is_inline) {
      e.key = std::string(m->key);
      e.value = std::string(m->value);
    } else {
      e.ref = m->ref;
      e.checksum = m->checksum;
    }
    bucket.entries.push_back(std::move(e));
    offset = m->next;
  }
  if (offset != bytes.size()) return Corrupt("trailing bytes", offset);
  return bucket;
}

std::string EncodeValueObject(std::string_view key, std::string_view value) {
  std::string out;
  out.reserve(4 + key.size() + value.size());
  AppendLe<uint32_t>(out, static_cast<uint32_t>(key.size()));
  out.append(key.data(), key.size());
  out.append(value.data(), value.size());
  return out;
}

uint64_t ValueObjectChecksum(std::string_view payload) {
  return XXH3_64bits_withSeed(payload.data(), payload.size(), kValueSeed);
}

absl::StatusOr<std::string_view> CheckValueObject(std::string_view payload, std::string_view key,
                                                  uint32_t value_bytes, std::optional<uint64_t> checksum) {
  // A mismatch means the pointer and the object disagree: the object was replaced under a reader (retry)
  // or memory is corrupt. Either way the bytes are not handed out.
  if (payload.size() != 4 + key.size() + value_bytes ||
      (checksum.has_value() && ValueObjectChecksum(payload) != *checksum)) {
    return absl::AbortedError("kv value object does not match its pointer");
  }
  if (LoadLe<uint32_t>(payload.data() + 0) != key.size() || payload.substr(4, key.size()) != key) {
    return absl::NotFoundError("kv value object holds another key");
  }
  return payload.substr(4 + key.size());
}

std::string EncodeRoot(const Root& root) {
  std::string out;
  AppendLe<uint32_t>(out, kRootMagic);
  AppendLe<uint16_t>(out, kRootFormat);
  AppendLe<uint8_t>(out, static_cast<uint8_t>(root.kind));
  AppendLe<uint8_t>(out, kSlotsPerBucket);
  AppendLe<uint64_t>(out, root.buckets);
  AppendLe<uint64_t>(out, root.epoch);
  AppendLe<uint32_t>(out, root.max_key_bytes);
  AppendLe<uint32_t>(out, root.max_value_bytes);
  AppendLe<uint32_t>(out, root.inline_bytes);
  AppendLe<uint32_t>(out, root.bucket_capacity);
  AppendLe<uint32_t>(out, static_cast<uint32_t>(root.chunks.size()));
  AppendLe<uint32_t>(out, root.buckets_per_chunk);
  AppendLe<uint32_t>(out, root.grow_at_permille);
  AppendLe<uint32_t>(out, root.directory_levels);
  for (const object::ObjectRef& ref : root.chunks) PutRef(out, ref);
  return out;
}

absl::StatusOr<Root> DecodeRoot(std::string_view bytes) {
  auto bad = [](std::string_view what) { return absl::DataLossError(absl::StrCat("corrupt kv root: ", std::string(what))); };
  if (bytes.size() < kRootHeaderBytes) return bad("short header");
  if (LoadLe<uint32_t>(bytes.data() + 0) != kRootMagic) return bad("magic");
  const uint16_t format = LoadLe<uint16_t>(bytes.data() + 4);
  if (format < kOldestRootFormat || format > kRootFormat) return bad("format version");
  Root root;
  const uint8_t kind = static_cast<uint8_t>(bytes[6]);
  if (kind != static_cast<uint8_t>(IndexKind::kHopscotch) && kind != static_cast<uint8_t>(IndexKind::kCuckoo)) {
    return bad("index kind");
  }
  root.kind = static_cast<IndexKind>(kind);
  if (static_cast<uint8_t>(bytes[7]) != kSlotsPerBucket) return bad("slots per bucket");
  root.buckets = LoadLe<uint64_t>(bytes.data() + 8);
  root.epoch = LoadLe<uint64_t>(bytes.data() + 16);
  root.max_key_bytes = LoadLe<uint32_t>(bytes.data() + 24);
  root.max_value_bytes = LoadLe<uint32_t>(bytes.data() + 28);
  root.inline_bytes = LoadLe<uint32_t>(bytes.data() + 32);
  root.bucket_capacity = LoadLe<uint32_t>(bytes.data() + 36);
  const uint32_t chunks = LoadLe<uint32_t>(bytes.data() + 40);
  root.buckets_per_chunk = LoadLe<uint32_t>(bytes.data() + 44);
  root.grow_at_permille = LoadLe<uint32_t>(bytes.data() + 48);
  if (root.grow_at_permille > 1000) return bad("grow load");
  root.directory_levels = LoadLe<uint32_t>(bytes.data() + 52);
  if (root.directory_levels > 1) return bad("directory levels");
  if (bytes.size() != kRootHeaderBytes + size_t{chunks} * kRefBytes) return bad("length");
  if (root.buckets < 2 || root.buckets_per_chunk == 0 || root.buckets_per_chunk > kMaxBucketsPerChunk) {
    return bad("bucket count");
  }
  // The root's references: the chunks, or directories of buckets_per_chunk chunk references each.
  const uint64_t expected = root.directory_levels == 0
                                ? root.chunk_count()
                                : (root.chunk_count() + root.buckets_per_chunk - 1) / root.buckets_per_chunk;
  if (expected != chunks) return bad("bucket count");
  for (uint32_t i = 0; i < chunks; ++i) root.chunks.push_back(GetRef(bytes, kRootHeaderBytes + i * kRefBytes));
  return root;
}

std::string EncodeRefs(const std::vector<object::ObjectRef>& refs) {
  std::string out;
  out.reserve(refs.size() * kRefBytes);
  for (const object::ObjectRef& ref : refs) PutRef(out, ref);
  return out;
}

absl::StatusOr<std::vector<object::ObjectRef>> DecodeRefs(std::string_view bytes) {
  if (bytes.size() % kRefBytes != 0) return absl::DataLossError("corrupt kv chunk: length");
  std::vector<object::ObjectRef> refs;
  refs.reserve(bytes.size() / kRefBytes);
  for (size_t at = 0; at < bytes.size(); at += kRefBytes) refs.push_back(GetRef(bytes, at));
  return refs;
}

}  // namespace fathom::kv
