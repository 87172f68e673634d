#include "logging/record_format.h"

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"

namespace fathom::logging {
namespace {

ObjectState Sample() {
  ObjectState s;
  s.address = memory::GlobalAddress{(2 << 16) | 1, 4096};
  s.capacity = 128;
  s.incarnation = 7;
  s.flags = 1;
  s.version = 42;
  s.payload = "balance:100";
  s.role = Role::kBackup;
  s.position = 99;
  s.txn_epoch = 3;
  s.txn_node = 2;
  s.txn_thread = 1;
  s.txn_counter = 12345;
  return s;
}

TEST(RecordFormatTest, RoundTripsEveryField) {
  const ObjectState s = Sample();
  const std::string key = ObjectKey(s.address);
  ASSERT_EQ(key.size(), 9u);
  const std::string value = EncodeState(s);
  EXPECT_EQ(value.size(), kRecordHeaderBytes + s.payload.size() + kChecksumBytes);
  ASSERT_OK_AND_ASSIGN(ObjectState d, DecodeState(key, value));
  EXPECT_EQ(d.address, s.address);
  EXPECT_EQ(d.capacity, s.capacity);
  EXPECT_EQ(d.incarnation, s.incarnation);
  EXPECT_EQ(d.flags, s.flags);
  EXPECT_EQ(d.version, s.version);
  EXPECT_EQ(d.payload, s.payload);
  EXPECT_EQ(d.role, s.role);
  EXPECT_EQ(d.position, s.position);
  EXPECT_EQ(d.txn_epoch, s.txn_epoch);
  EXPECT_EQ(d.txn_node, s.txn_node);
  EXPECT_EQ(d.txn_thread, s.txn_thread);
  EXPECT_EQ(d.txn_counter, s.txn_counter);
  EXPECT_EQ(DescribeKey(key), "object r131073+0x1000");
}

TEST(RecordFormatTest, KeysSortByRegionThenOffset) {
  EXPECT_LT(ObjectKey({1, 0xffffffff}), ObjectKey({2, 0}));
  EXPECT_LT(ObjectKey({2, 64}), ObjectKey({2, 128}));
  EXPECT_LT(std::string(kPositionKey), ObjectKey({0, 0}));  // metadata first
}

TEST(RecordFormatTest, EveryFlippedByteIsRefusedNamingTheKey) {
  const ObjectState s = Sample();
  const std::string key = ObjectKey(s.address);
  const std::string value = EncodeState(s);
  for (size_t i = 0; i < value.size(); ++i) {
    for (uint8_t bit : {0x01, 0x80}) {
      std::string bad = value;
      bad[i] = static_cast<char>(bad[i] ^ bit);
      auto decoded = DecodeState(key, bad);
      ASSERT_FALSE(decoded.ok()) << "byte " << i << " bit " << int{bit};
      EXPECT_NE(decoded.status().message().find("object r131073+0x1000"), std::string::npos) << decoded.status();
      if (i == 0) {
        EXPECT_EQ(decoded.status().code(), absl::StatusCode::kFailedPrecondition) << decoded.status();
      } else {
        EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
      }
    }
  }
}

TEST(RecordFormatTest, TruncatedOrExtendedValuesAreRefused) {
  const ObjectState s = Sample();
  const std::string key = ObjectKey(s.address);
  const std::string value = EncodeState(s);
  for (size_t n = 0; n < value.size(); ++n) {
    auto decoded = DecodeState(key, value.substr(0, n));
    ASSERT_FALSE(decoded.ok()) << n;
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
    if (n > 0) {
      EXPECT_NE(decoded.status().message().find("truncated"), std::string::npos) << decoded.status();
    }
  }
  auto longer = DecodeState(key, value + "x");
  EXPECT_EQ(longer.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(longer.status().message().find("wrong length"), std::string::npos) << longer.status();
}

TEST(RecordFormatTest, AnUnknownFormatVersionIsNamed) {
  const ObjectState s = Sample();
  std::string value = EncodeState(s);
  value[0] = 2;
  auto decoded = DecodeState(ObjectKey(s.address), value);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(decoded.status().message().find("format version 2"), std::string::npos) << decoded.status();
}

TEST(RecordFormatTest, AValueMovedUnderAnotherKeyFailsItsChecksum) {
  const ObjectState s = Sample();
  auto decoded = DecodeState(ObjectKey({s.address.region, s.address.offset + 128}), EncodeState(s));
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(decoded.status().message().find("checksum"), std::string::npos) << decoded.status();
  EXPECT_EQ(DecodeState("m:node", EncodeState(s)).status().code(), absl::StatusCode::kDataLoss);
}

TEST(RecordFormatTest, WellChecksummedNonsenseIsStillRefused) {
  ObjectState s = Sample();
  s.payload = std::string(200, 'x');  // more than the 128-byte slot holds
  EXPECT_EQ(DecodeState(ObjectKey(s.address), EncodeState(s)).status().code(), absl::StatusCode::kDataLoss);
  s = Sample();
  s.flags = 6;
  EXPECT_EQ(DecodeState(ObjectKey(s.address), EncodeState(s)).status().code(), absl::StatusCode::kDataLoss);
  s = Sample();
  s.role = static_cast<Role>(9);
  EXPECT_EQ(DecodeState(ObjectKey(s.address), EncodeState(s)).status().code(), absl::StatusCode::kDataLoss);
  s = Sample();
  s.position = 0;
  EXPECT_EQ(DecodeState(ObjectKey(s.address), EncodeState(s)).status().code(), absl::StatusCode::kDataLoss);
}

TEST(RecordFormatTest, MetadataRoundTripsAndRefusesDamage) {
  const std::string value = EncodeMeta(kPositionKey, 77);
  ASSERT_OK_AND_ASSIGN(uint64_t position, DecodeMeta(kPositionKey, value));
  EXPECT_EQ(position, 77u);
  for (size_t i = 0; i < value.size(); ++i) {
    std::string bad = value;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    EXPECT_FALSE(DecodeMeta(kPositionKey, bad).ok()) << i;
  }
  for (size_t n = 0; n < value.size(); ++n) EXPECT_FALSE(DecodeMeta(kPositionKey, value.substr(0, n)).ok()) << n;
  EXPECT_FALSE(DecodeMeta(kNodeKey, value).ok()) << "a position is not a node id";
}

}  // namespace
}  // namespace fathom::logging
