// The kv byte layouts (docs/formats/kv.md): round trips, and every kind of corruption is DataLoss.
#include "kv/format.h"

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "platform/memory/size_classes.h"

namespace fathom::kv {
namespace {

// An inline entry, a pointer to the slot its bytes imply (written as a 27-byte pointer) and an older
// build's checked pointer to a larger slot (kept with its checksum).
Bucket SampleBucket() {
  Bucket b;
  b.spilled = 3;
  b.flags = kBucketFrozen;
  b.epoch = 7;
  Entry in;
  in.hash = KeyHash("alpha");
  in.key = "alpha";
  in.value = "one";
  in.key_bytes = 5;
  in.value_bytes = 3;
  b.entries.push_back(in);
  Entry out;
  out.hash = KeyHash("beta");
  out.is_inline = false;
  out.key_bytes = 4;
  out.value_bytes = 5000;
  out.ref = object::ObjectRef{memory::GlobalAddress{0x10001, 0x400}, 9, 5120};  // 32 + 4 + 4 + 5000 -> 5120
  b.entries.push_back(out);
  Entry checked = out;
  checked.hash = KeyHash("gamma");
  checked.key_bytes = 5;
  checked.ref = object::ObjectRef{memory::GlobalAddress{0x10002, 0x800}, 4, 8192};
  checked.checksum = 0x1234567890abcdef;
  b.entries.push_back(checked);
  return b;
}

TEST(KvFormatTest, AValueObjectsSlotIsTheSizeClassOfItsBytes) {
  EXPECT_EQ(ValueObjectCapacity(4, 5000), 5120u);
  EXPECT_EQ(ValueObjectCapacity(23, 1081), 1152u);  // a YCSB record
  EXPECT_EQ(ValueObjectCapacity(0, 28), 64u);
  EXPECT_EQ(ValueObjectCapacity(0, 29), 128u);
  EXPECT_EQ(ValueObjectCapacity(10, memory::kMaxSlotBytes), 0u);  // no slot holds it
  EXPECT_EQ(kBucketHeaderBytes + kSlotsPerBucket * kPointerEntryBytes + object::kHeaderBytes, 256u);
}

TEST(KvFormatTest, BucketRoundTrips) {
  const Bucket b = SampleBucket();
  const std::string bytes = EncodeBucket(b);
  EXPECT_EQ(bytes.size(), b.EncodedBytes());
  EXPECT_EQ(bytes.size(), kBucketHeaderBytes + kEntryHeaderBytes + 8 + kPointerEntryBytes + kEntryHeaderBytes + kPointerBytes);
  EXPECT_EQ(bytes[kBucketHeaderBytes + kEntryHeaderBytes + 8 + 8], 3) << "the kind of a 27-byte pointer";
  ASSERT_OK_AND_ASSIGN(Bucket back, DecodeBucket(bytes));
  EXPECT_EQ(back.spilled, 3);
  EXPECT_EQ(back.epoch, 7u);
  EXPECT_EQ(back.flags, kBucketFrozen);
  EXPECT_EQ(BucketEpoch(bytes).value(), 7u);
  EXPECT_TRUE(absl::IsDataLoss(BucketEpoch(bytes.substr(0, 7)).status()));
  ASSERT_EQ(back.entries.size(), 3u);
  EXPECT_EQ(back.entries[0].key, "alpha");
  EXPECT_EQ(back.entries[0].value, "one");
  for (int i : {1, 2}) {
    EXPECT_FALSE(back.entries[i].is_inline);
    EXPECT_EQ(back.entries[i].hash, b.entries[i].hash);
    EXPECT_EQ(back.entries[i].ref, b.entries[i].ref);
    EXPECT_EQ(back.entries[i].checksum, b.entries[i].checksum);
    EXPECT_EQ(back.entries[i].key_bytes, b.entries[i].key_bytes);
    EXPECT_EQ(back.entries[i].value_bytes, 5000u);
  }
  EXPECT_FALSE(back.entries[1].checksum.has_value());
  EXPECT_EQ(EncodeBucket(back), bytes);
}

TEST(KvFormatTest, ACheckedPointerToItsOwnSizeClassIsRewrittenShort) {
  Bucket b = SampleBucket();
  b.entries[2].ref.capacity = ValueObjectCapacity(b.entries[2].key_bytes, b.entries[2].value_bytes);
  const std::string bytes = EncodeBucket(b);
  EXPECT_EQ(bytes.size(), kBucketHeaderBytes + kEntryHeaderBytes + 8 + 2 * kPointerEntryBytes);
  ASSERT_OK_AND_ASSIGN(Bucket back, DecodeBucket(bytes));
  EXPECT_EQ(back.entries[2].ref, b.entries[2].ref);
  EXPECT_FALSE(back.entries[2].checksum.has_value());
}

TEST(KvFormatTest, FindInBucketScansRawBytes) {
  const std::string bytes = EncodeBucket(SampleBucket());
  ASSERT_OK_AND_ASSIGN(RawMatch a, FindInBucket(bytes, KeyHash("alpha"), 0));
  ASSERT_NE(a.offset, std::string_view::npos);
  EXPECT_TRUE(a.is_inline);
  EXPECT_EQ(a.key, "alpha");
  EXPECT_EQ(a.value, "one");
  ASSERT_OK_AND_ASSIGN(RawMatch b, FindInBucket(bytes, KeyHash("beta"), 0));
  EXPECT_FALSE(b.is_inline);
  EXPECT_EQ(b.ref, SampleBucket().entries[1].ref);
  EXPECT_EQ(b.key_bytes, 4u);
  EXPECT_EQ(b.value_bytes, 5000u);
  EXPECT_FALSE(b.checksum.has_value());
  ASSERT_OK_AND_ASSIGN(RawMatch c, FindInBucket(bytes, KeyHash("gamma"), b.next));
  EXPECT_EQ(c.offset, b.next);
  EXPECT_EQ(c.ref.capacity, 8192u);
  EXPECT_EQ(c.checksum, 0x1234567890abcdefu);
  EXPECT_EQ(c.next, bytes.size());
  ASSERT_OK_AND_ASSIGN(RawMatch none, FindInBucket(bytes, KeyHash("delta"), 0));
  EXPECT_EQ(none.offset, std::string_view::npos);
  ASSERT_OK_AND_ASSIGN(RawMatch after, FindInBucket(bytes, KeyHash("alpha"), a.next));
  EXPECT_EQ(after.offset, std::string_view::npos);
}

TEST(KvFormatTest, CorruptBucketsAreDataLoss) {
  const std::string good = EncodeBucket(SampleBucket());
  // Every truncation.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_TRUE(absl::IsDataLoss(DecodeBucket(good.substr(0, n)).status())) << "truncated to " << n;
  }
  std::string bad = good;
  bad[0] = 9;  // more entries than slots
  EXPECT_TRUE(absl::IsDataLoss(DecodeBucket(bad).status()));
  EXPECT_TRUE(absl::IsDataLoss(FindInBucket(bad, 1, 0).status()));
  bad = good;
  bad[kBucketHeaderBytes + 8] = 7;  // entry kind
  EXPECT_TRUE(absl::IsDataLoss(DecodeBucket(bad).status()));
  bad = good;
  bad[kBucketHeaderBytes + 12] = 100;  // inline value length past the end
  EXPECT_TRUE(absl::IsDataLoss(DecodeBucket(bad).status()));
  EXPECT_TRUE(absl::IsDataLoss(DecodeBucket(good + "x").status()));  // trailing bytes
  bad = good;
  bad[2] = 2;  // an unknown flag
  EXPECT_TRUE(absl::IsDataLoss(DecodeBucket(bad).status()));
  bad = good;
  bad[3] = 1;  // reserved
  EXPECT_TRUE(absl::IsDataLoss(DecodeBucket(bad).status()));
  // A 27-byte pointer whose value bytes no slot holds.
  const size_t pointer = kBucketHeaderBytes + kEntryHeaderBytes + 8;
  bad = good;
  bad[pointer + 11 + 3] = 0x7f;
  EXPECT_TRUE(absl::IsDataLoss(DecodeBucket(bad).status()));
  EXPECT_TRUE(absl::IsDataLoss(FindInBucket(bad, KeyHash("beta"), 0).status()));
  // A 27-byte pointer that claims a longer value: its slot grows with it, the walk stays in step.
  bad = good;
  bad[pointer + 11 + 2] = 1;  // 5000 + 65536 bytes of value
  ASSERT_OK_AND_ASSIGN(Bucket longer, DecodeBucket(bad));
  EXPECT_EQ(longer.entries[1].ref.capacity, ValueObjectCapacity(4, 5000 + 65536));
  // The checked pointer's reserved byte.
  bad = good;
  bad[pointer + kPointerEntryBytes + 9] = 1;
  EXPECT_TRUE(absl::IsDataLoss(DecodeBucket(bad).status()));
}

TEST(KvFormatTest, ValueObjectIsCheckedAgainstItsPointer) {
  const std::string payload = EncodeValueObject("key", "a value");
  const uint64_t sum = ValueObjectChecksum(payload);
  ASSERT_OK_AND_ASSIGN(std::string_view v, CheckValueObject(payload, "key", 7, sum));
  EXPECT_EQ(v, "a value");
  EXPECT_TRUE(absl::IsAborted(CheckValueObject(payload, "key", 7, sum + 1).status()));
  EXPECT_TRUE(absl::IsAborted(CheckValueObject(payload, "key", 6, sum).status()));
  std::string flipped = payload;
  flipped.back() ^= 1;
  EXPECT_TRUE(absl::IsAborted(CheckValueObject(flipped, "key", 7, sum).status()));
  EXPECT_TRUE(absl::IsNotFound(CheckValueObject(payload, "kez", 7, sum).status()));
  // Without a checksum (a 27-byte pointer) the length and the key are still checked; the bytes themselves
  // were checked by the object header's checksum when the object was read.
  ASSERT_OK_AND_ASSIGN(v, CheckValueObject(payload, "key", 7, std::nullopt));
  EXPECT_EQ(v, "a value");
  EXPECT_TRUE(absl::IsAborted(CheckValueObject(payload, "key", 6, std::nullopt).status()));
  EXPECT_TRUE(absl::IsNotFound(CheckValueObject(payload, "kez", 7, std::nullopt).status()));
}

TEST(KvFormatTest, RootRoundTripsAndRejectsCorruption) {
  Root root;
  root.buckets = 70000;
  root.epoch = 3;
  root.max_key_bytes = 1024;
  root.max_value_bytes = 5000;
  root.inline_bytes = 232;
  root.bucket_capacity = 2048;
  root.buckets_per_chunk = 32768;
  root.grow_at_permille = 850;
  for (int i = 0; i < 3; ++i) root.chunks.push_back(object::ObjectRef{memory::GlobalAddress{0x10001, 64u * i}, 1, 1 << 20});
  const std::string bytes = EncodeRoot(root);
  ASSERT_OK_AND_ASSIGN(Root back, DecodeRoot(bytes));
  EXPECT_EQ(back.buckets, 70000u);
  EXPECT_EQ(back.chunks, root.chunks);
  EXPECT_EQ(back.grow_at_permille, 850u);
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(DecodeRoot(bytes.substr(0, n)).ok());
  // Format 3 is written; format 2 (checked pointers only) is still read; others are DataLoss.
  EXPECT_EQ(bytes[4], 3);
  std::string bad = bytes;
  bad[4] = 2;
  EXPECT_OK(DecodeRoot(bad).status());
  for (int format : {1, 4}) {
    bad[4] = static_cast<char>(format);
    EXPECT_TRUE(absl::IsDataLoss(DecodeRoot(bad).status())) << format;
  }
  bad = bytes;
  bad[0] ^= 1;
  EXPECT_TRUE(absl::IsDataLoss(DecodeRoot(bad).status()));
  bad = bytes;
  bad[10] = 0;  // 70000 becomes 4464 buckets: no longer 3 chunks
  EXPECT_TRUE(absl::IsDataLoss(DecodeRoot(bad).status()));
  EXPECT_TRUE(absl::IsDataLoss(DecodeRefs("short").status()));
  bad = bytes;
  bad[49] = 0x10;  // a grow load over 1000 permille
  EXPECT_TRUE(absl::IsDataLoss(DecodeRoot(bad).status()));
  bad = bytes;
  bad[52] = 1;  // directories: 3 chunks would take one, not 3
  EXPECT_TRUE(absl::IsDataLoss(DecodeRoot(bad).status()));
  bad[52] = 2;  // no such level
  EXPECT_TRUE(absl::IsDataLoss(DecodeRoot(bad).status()));
  // The index kind: both kinds round trip; any other byte is DataLoss.
  root.kind = IndexKind::kCuckoo;
  ASSERT_OK_AND_ASSIGN(Root cuckoo, DecodeRoot(EncodeRoot(root)));
  EXPECT_EQ(cuckoo.kind, IndexKind::kCuckoo);
  for (int kind : {0, 3, 255}) {
    bad = bytes;
    bad[6] = static_cast<char>(kind);
    EXPECT_TRUE(absl::IsDataLoss(DecodeRoot(bad).status())) << kind;
  }
}

TEST(KvFormatTest, ARootOfDirectoriesRoundTripsAndMustNameThemAll) {
  Root root;
  root.buckets = 200'000'000;  // 390,625 chunks of 512: 763 directories of 512 chunks
  root.buckets_per_chunk = 512;
  root.directory_levels = 1;
  for (int i = 0; i < 763; ++i) root.chunks.push_back(object::ObjectRef{memory::GlobalAddress{0x10001, 64u * i}, 1, 8192});
  ASSERT_OK_AND_ASSIGN(Root back, DecodeRoot(EncodeRoot(root)));
  EXPECT_EQ(back.directory_levels, 1u);
  EXPECT_EQ(back.chunk_count(), 390'625u);
  EXPECT_EQ(back.chunks, root.chunks);
  root.chunks.pop_back();  // one directory short
  EXPECT_TRUE(absl::IsDataLoss(DecodeRoot(EncodeRoot(root)).status()));
  root.directory_levels = 0;  // 762 references cannot be 390,625 chunks
  EXPECT_TRUE(absl::IsDataLoss(DecodeRoot(EncodeRoot(root)).status()));
}

}  // namespace
}  // namespace fathom::kv
