#include "logging/record_format.h"

#include <xxhash.h>

#include <cstring>
#include <functional>
#include <vector>

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
  value[0] = 3;
  auto decoded = DecodeState(ObjectKey(s.address), value);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(decoded.status().message().find("format version 3"), std::string::npos) << decoded.status();
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

// A segment of positions 10..20 holding three states (positions 10, 13, 20; the others superseded).
std::string SampleSegment() {
  SegmentEncoder encoder(10);
  ObjectState s = Sample();
  s.position = 10;
  encoder.Add(s);
  s.address = memory::GlobalAddress{(2 << 16) | 1, 8192};
  s.position = 13;
  s.payload = "";
  s.flags = 0;  // a free
  encoder.Add(s);
  s = Sample();
  s.position = 20;
  s.version = 43;
  s.payload = "balance:90";
  encoder.Add(s);
  return encoder.Finish(20);
}

// Puts a correct checksum back after the test changed the value: for lies a checksum cannot catch.
void Reseal(const std::string& key, std::string& value) {
  const size_t covered = value.size() - kChecksumBytes;
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, key.data(), key.size());
  XXH3_64bits_update(state, value.data(), covered);
  const uint64_t checksum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  std::memcpy(value.data() + covered, &checksum, sizeof checksum);
}

template <typename T>
void Set(std::string& value, size_t at, T field) {
  std::memcpy(value.data() + at, &field, sizeof field);
}

TEST(RecordFormatTest, MemberListsRoundTripAndRefuseDamageAndLies) {
  const LoggedMembers members{.configuration_epoch = 9, .ids = {1, 2, 7}};
  const std::string value = EncodeMembers(kMembersKey, members);
  ASSERT_OK_AND_ASSIGN(LoggedMembers decoded, DecodeMembers(kMembersKey, value));
  EXPECT_EQ(decoded.configuration_epoch, 9u);
  EXPECT_EQ(decoded.ids, members.ids);
  for (size_t i = 0; i < value.size(); ++i) {
    std::string bad = value;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    EXPECT_FALSE(DecodeMembers(kMembersKey, bad).ok()) << i;
  }
  for (size_t n = 0; n < value.size(); ++n) EXPECT_FALSE(DecodeMembers(kMembersKey, value.substr(0, n)).ok()) << n;
  EXPECT_FALSE(DecodeMembers(kPositionKey, value).ok()) << "moved under another key";
  // Lies a checksum cannot catch: a count that does not match the length, ids out of order or range.
  for (auto [at, field] : std::vector<std::pair<size_t, uint32_t>>{{4, 2}, {4, 4}, {4, 0}, {16, 3}, {24, 0}, {20, 70000}}) {
    std::string lie = value;
    Set<uint32_t>(lie, at, field);
    Reseal(kMembersKey, lie);
    EXPECT_EQ(DecodeMembers(kMembersKey, lie).status().code(), absl::StatusCode::kDataLoss) << at << "=" << field;
  }
  std::string unknown = value;
  unknown[0] = 9;
  Reseal(kMembersKey, unknown);
  EXPECT_EQ(DecodeMembers(kMembersKey, unknown).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SegmentFormatTest, RoundTripsEveryStateInOrder) {
  const std::string key = SegmentKey(10);
  EXPECT_EQ(DescribeKey(key), "segment 10");
  ASSERT_OK_AND_ASSIGN(Segment segment, DecodeSegment(key, SampleSegment()));
  EXPECT_EQ(segment.first, 10u);
  EXPECT_EQ(segment.last, 20u);
  ASSERT_EQ(segment.states.size(), 3u);
  const ObjectState s = Sample();
  const ObjectState& d = segment.states[0];
  EXPECT_EQ(d.address, s.address);
  EXPECT_EQ(d.capacity, s.capacity);
  EXPECT_EQ(d.incarnation, s.incarnation);
  EXPECT_EQ(d.flags, s.flags);
  EXPECT_EQ(d.version, s.version);
  EXPECT_EQ(d.payload, s.payload);
  EXPECT_EQ(d.role, s.role);
  EXPECT_EQ(d.position, 10u);
  EXPECT_EQ(d.txn_epoch, s.txn_epoch);
  EXPECT_EQ(d.txn_node, s.txn_node);
  EXPECT_EQ(d.txn_thread, s.txn_thread);
  EXPECT_EQ(d.txn_counter, s.txn_counter);
  EXPECT_FALSE(segment.states[1].live());
  EXPECT_EQ(segment.states[1].payload, "");
  EXPECT_EQ(segment.states[2].payload, "balance:90");
  EXPECT_EQ(segment.states[2].position, 20u);
  // An empty segment (every state of its batch superseded) still says which positions it covers.
  ASSERT_OK_AND_ASSIGN(Segment empty, DecodeSegment(SegmentKey(21), SegmentEncoder(21).Finish(25)));
  EXPECT_EQ(empty.last, 25u);
  EXPECT_TRUE(empty.states.empty());
}

TEST(SegmentFormatTest, SegmentsSortByPositionAfterObjectKeys) {
  EXPECT_LT(SegmentKey(255), SegmentKey(256));
  EXPECT_LT(ObjectKey({0xffffffff, 0xffffffff}), SegmentKey(0));
  EXPECT_LT(std::string(kFoldedKey), ObjectKey({0, 0}));
  EXPECT_LT(std::string(kFormatKey), ObjectKey({0, 0}));
}

TEST(SegmentFormatTest, EveryFlippedByteIsRefusedNamingTheSegment) {
  const std::string key = SegmentKey(10);
  const std::string value = SampleSegment();
  for (size_t i = 0; i < value.size(); ++i) {
    for (uint8_t bit : {0x01, 0x80}) {
      std::string bad = value;
      bad[i] = static_cast<char>(bad[i] ^ bit);
      auto decoded = DecodeSegment(key, bad);
      ASSERT_FALSE(decoded.ok()) << "byte " << i << " bit " << int{bit};
      EXPECT_NE(decoded.status().message().find("segment 10"), std::string::npos) << decoded.status();
      EXPECT_EQ(decoded.status().code(),
                i == 0 ? absl::StatusCode::kFailedPrecondition : absl::StatusCode::kDataLoss)
          << decoded.status();
    }
  }
}

TEST(SegmentFormatTest, TruncatedOrExtendedSegmentsAreRefused) {
  const std::string key = SegmentKey(10);
  const std::string value = SampleSegment();
  for (size_t n = 0; n < value.size(); ++n) {
    auto decoded = DecodeSegment(key, value.substr(0, n));
    ASSERT_FALSE(decoded.ok()) << n;
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
  }
  EXPECT_EQ(DecodeSegment(key, value + "x").status().code(), absl::StatusCode::kDataLoss);
}

TEST(SegmentFormatTest, AnUnknownFormatVersionIsNamed) {
  std::string value = SampleSegment();
  value[0] = 3;
  auto decoded = DecodeSegment(SegmentKey(10), value);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(decoded.status().message().find("format version 3"), std::string::npos) << decoded.status();
}

TEST(SegmentFormatTest, ASegmentMovedUnderAnotherKeyIsRefused) {
  auto decoded = DecodeSegment(SegmentKey(11), SampleSegment());
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(decoded.status().message().find("checksum"), std::string::npos) << decoded.status();
  EXPECT_EQ(DecodeSegment(ObjectKey({1, 0}), SampleSegment()).status().code(), absl::StatusCode::kDataLoss);
  // Resealed under the other key, the position inside still gives it away.
  const std::string key = SegmentKey(11);
  std::string value = SampleSegment();
  Reseal(key, value);
  decoded = DecodeSegment(key, value);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(decoded.status().message().find("from position 10"), std::string::npos) << decoded.status();
}

// Each lie with a correct checksum (a writer's bug): the decoder trusts no length or position.
TEST(SegmentFormatTest, LiesUnderAGoodChecksumAreRefused) {
  const std::string key = SegmentKey(10);
  const size_t second = kSegmentHeaderBytes + kSegmentEntryBytes + Sample().payload.size();
  struct Lie {
    const char* what;
    std::function<void(std::string&)> tell;
    const char* error;
  };
  const std::vector<Lie> lies = {
      {"more states than positions", [](std::string& v) { Set<uint32_t>(v, 4, 12); }, "12 states for positions"},
      {"more states than there are", [](std::string& v) { Set<uint32_t>(v, 4, 4); }, "state 3 of 4 is cut short"},
      {"more states than bytes", [](std::string& v) { Set<uint32_t>(v, 4, 3); v.resize(v.size() - 30); }, "cut short"},
      {"fewer states than there are", [](std::string& v) { Set<uint32_t>(v, 4, 2); }, "bytes after the last state"},
      {"a payload longer than the value",
       [&](std::string& v) { Set<uint32_t>(v, second + 60, 1000); Set<uint32_t>(v, second + 12, 2048); },
       "runs past the end"},
      {"a payload longer than its slot", [](std::string& v) { Set<uint32_t>(v, kSegmentHeaderBytes + 12, 32); },
       "in a slot of 32"},
      {"positions out of order", [&](std::string& v) { Set<uint64_t>(v, second + 32, 9); }, "at position 9"},
      {"a position past the segment", [&](std::string& v) { Set<uint64_t>(v, second + 32, 21); },
       "at position 21"},
      {"the last position before the first", [](std::string& v) { Set<uint64_t>(v, 16, 9); }, "positions 10..9"},
      {"an unknown role", [](std::string& v) { Set<uint8_t>(v, kSegmentHeaderBytes + 8, 3); }, "unknown role 3"},
      {"a reserved byte", [](std::string& v) { Set<uint8_t>(v, 2, 1); }, "reserved"},
  };
  for (const Lie& lie : lies) {
    std::string value = SampleSegment();
    lie.tell(value);
    Reseal(key, value);
    auto decoded = DecodeSegment(key, value);
    ASSERT_FALSE(decoded.ok()) << lie.what;
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << lie.what << ": " << decoded.status();
    EXPECT_NE(decoded.status().message().find(lie.error), std::string::npos) << lie.what << ": " << decoded.status();
  }
}

}  // namespace
}  // namespace fathom::logging
