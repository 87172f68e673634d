// The byte layouts of a kv table's objects (docs/formats/kv.md): buckets (one neighbourhood of up to
// kSlotsPerBucket entries per object, so one one-sided read returns the whole neighbourhood), out-of-line
// value objects behind self-verifying pointers, the table's root object and its chunks of bucket
// references. Everything read from memory is checked here before anyone trusts it: a malformed bucket or
// value is DataLoss, never a crash or a read out of bounds.
#ifndef FATHOM_KV_FORMAT_H_
#define FATHOM_KV_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "platform/object/object_layout.h"

namespace fathom::kv {

inline constexpr int kSlotsPerBucket = 8;   // H: FaRM's neighbourhood size
// Hopscotch: a key lives in its home bucket or one of the next kHopscotchReach - 1 buckets; the home
// bucket's header has a bit per distance, so a lookup reads only the buckets that may hold it.
inline constexpr int kHopscotchReach = 8;
inline constexpr size_t kBucketHeaderBytes = 8;
inline constexpr size_t kEntryHeaderBytes = 16;  // inline entries and checked pointers
// A checked pointer (kind 2, written by builds before table format 3): address 8, incarnation 4,
// capacity 4, checksum 8 after the entry header.
inline constexpr size_t kPointerBytes = 24;
// A pointer entry (kind 3), whole: hash 8, kind 1, key bytes 2, value bytes 4, address 8, incarnation 4.
// No capacity (the value object's slot is the size class of its bytes) and no checksum (value objects are
// never written in place, so address and incarnation name one content; the object header's checksum
// covers it): 8 entries and the headers fit a 256-byte slot.
inline constexpr size_t kPointerEntryBytes = 27;
// Inline bytes at which an inline entry is no larger than a pointer entry: a table whose values never fit
// inline anyway gets the smallest buckets with this.
inline constexpr uint32_t kInlineBytesOfAPointer = kPointerEntryBytes - kEntryHeaderBytes;
// A PUT writes whole buckets, and a commit's records travel in one ring message (64 KiB rings take
// about 18 KiB): buckets stay within 16 KiB, so inline entries (key + value) within 2027 bytes.
inline constexpr size_t kMaxBucketBytes = 16384;
inline constexpr uint32_t kMaxInlineBytes = (kMaxBucketBytes - 32 - kBucketHeaderBytes) / kSlotsPerBucket - kEntryHeaderBytes;
inline constexpr size_t kRefBytes = 16;
inline constexpr uint32_t kRootMagic = 0x544b5646;  // "FVKT" little-endian
inline constexpr uint16_t kRootFormat = 3;  // 2: grow_at_permille (resize); 3: pointer entries of 27 bytes
inline constexpr uint16_t kOldestRootFormat = 2;  // a format 2 table's buckets hold checked pointers
inline constexpr size_t kRootHeaderBytes = 56;
inline constexpr uint32_t kRootCapacity = 4096;  // slot bytes of every root object
inline constexpr uint32_t kMaxBucketsPerChunk = 65536;
// References a root holds (its slot, less the object and root headers).
inline constexpr size_t kMaxRootRefs = (kRootCapacity - object::kHeaderBytes - kRootHeaderBytes) / kRefBytes;
// Bucket flags (byte 2 of the header). A frozen bucket belongs to a table being resized: PUT/DELETE
// that read it are rejected (they retry on the new table once it is published); GETs still trust it.
inline constexpr uint8_t kBucketFrozen = 1;

enum class IndexKind : uint8_t { kHopscotch = 1, kCuckoo = 2 };

// The hash of a key: XXH3-64 with a fixed seed. Its high bits pick the home bucket; the full hash is kept
// in the entry so lookups compare keys only on a hash match.
uint64_t KeyHash(std::string_view key);

// The slot bytes of the value object for a key and value of these sizes: the size class of its header
// and payload (u32 key length, key, value); 0 if no slot holds it. A pointer entry (kind 3) implies it.
uint32_t ValueObjectCapacity(uint32_t key_bytes, uint32_t value_bytes);

// One slot of a bucket. Either inline (key and value in the bucket) or a pointer to an object that holds
// the key and value (value_object below).
struct Entry {
  uint64_t hash = 0;
  bool is_inline = true;
  uint16_t key_bytes = 0;
  uint32_t value_bytes = 0;
  std::string key;    // inline entries only
  std::string value;  // inline entries only
  object::ObjectRef ref;  // pointer entries only
  // Pointer entries: XXH3-64 of the value object's payload, when the entry carries one (a checked pointer
  // of an older build, kept as one only if its slot is not the size class of its bytes).
  std::optional<uint64_t> checksum;

  // A pointer entry is written as a 27-byte pointer when its slot is the one its bytes imply.
  bool IsShortPointer() const { return !is_inline && ref.capacity == ValueObjectCapacity(key_bytes, value_bytes); }
  size_t EncodedBytes() const {
    if (is_inline) return kEntryHeaderBytes + key.size() + value.size();
    return IsShortPointer() ? kPointerEntryBytes : kEntryHeaderBytes + kPointerBytes;
  }
};

struct Bucket {
  // Hopscotch: bit d-1 is set when some key whose home is this bucket lives d buckets further on
  // (d = 1..7). Always zero in cuckoo tables.
  uint8_t spilled = 0;
  uint8_t flags = 0;    // kBucketFrozen
  // Low 32 bits of the table epoch the bucket belongs to. A resize retires the old table's buckets by
  // writing the new epoch here: an operation holding the old epoch sees a mismatch and refetches.
  uint32_t epoch = 0;
  std::vector<Entry> entries;

  size_t EncodedBytes() const;
};

std::string EncodeBucket(const Bucket& bucket);
absl::StatusOr<Bucket> DecodeBucket(std::string_view bytes);

// The lookup GETs do: scans the encoded bucket for `hash` without decoding (no allocation). Returns the
// offset of the first matching entry at or after `from` (an entry offset), or npos. Assumes a bucket that
// DecodeBucket would accept only as far as it reads; every offset is bounds-checked.
struct RawMatch {
  size_t offset = std::string_view::npos;  // npos: no match
  bool is_inline = false;
  std::string_view key;    // inline
  std::string_view value;  // inline
  object::ObjectRef ref;   // pointer
  uint32_t key_bytes = 0;
  uint32_t value_bytes = 0;
  std::optional<uint64_t> checksum;  // pointer: a checked pointer's
  size_t next = 0;  // offset of the following entry
};
absl::StatusOr<RawMatch> FindInBucket(std::string_view bucket, uint64_t hash, size_t from);
// The bucket's spill bits (bytes[1]), or DataLoss if the bucket is too short.
absl::StatusOr<uint8_t> BucketSpilled(std::string_view bucket);
// The bucket's epoch word (bytes[4..8]), or DataLoss if the bucket is too short.
absl::StatusOr<uint32_t> BucketEpoch(std::string_view bucket);

// An out-of-line value object's payload: u32 key length, key, value. A checked pointer (kind 2) stores its
// checksum.
std::string EncodeValueObject(std::string_view key, std::string_view value);
uint64_t ValueObjectChecksum(std::string_view payload);
// Checks `payload` against the pointer (length, the checksum if it has one, key) and returns the value part.
absl::StatusOr<std::string_view> CheckValueObject(std::string_view payload, std::string_view key,
                                                  uint32_t value_bytes, std::optional<uint64_t> checksum);

// The root object: the table's descriptor and the references of its chunks of bucket references, or,
// for a table with more chunks than a root holds, of its directories of chunk references.
struct Root {
  IndexKind kind = IndexKind::kHopscotch;
  uint64_t buckets = 0;
  uint64_t epoch = 1;
  uint32_t max_key_bytes = 0;
  uint32_t max_value_bytes = 0;
  uint32_t inline_bytes = 0;
  uint32_t bucket_capacity = 0;
  uint32_t buckets_per_chunk = 0;
  // Load (entries per slot, in thousandths) past which an insert grows the table; 0: never.
  uint32_t grow_at_permille = 0;
  // 0: `chunks` are the chunks. 1: `chunks` are directories, each the references of up to
  // buckets_per_chunk chunks (directory k holds chunks [k * buckets_per_chunk, ...)).
  uint32_t directory_levels = 0;
  std::vector<object::ObjectRef> chunks;

  // ceil(buckets / buckets_per_chunk): the chunk objects, behind directories or not.
  uint64_t chunk_count() const { return (buckets + buckets_per_chunk - 1) / buckets_per_chunk; }
};
std::string EncodeRoot(const Root& root);
absl::StatusOr<Root> DecodeRoot(std::string_view bytes);

std::string EncodeRefs(const std::vector<object::ObjectRef>& refs);
absl::StatusOr<std::vector<object::ObjectRef>> DecodeRefs(std::string_view bytes);

}  // namespace fathom::kv

#endif  // FATHOM_KV_FORMAT_H_
