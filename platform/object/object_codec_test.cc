// The object format and the reader's check: every corruption is rejected, never accepted.
#include "platform/object/object_codec.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "platform/object/local_object.h"

namespace fathom::object {
namespace {

constexpr uint32_t kCapacity = 256;

class ObjectCodecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    slot_.assign(kCapacity / 8, 0);
    LocalObject object(Bytes(), kCapacity);
    auto version = object.Lock(10);
    ASSERT_TRUE(version.ok());
    std::vector<std::byte> payload(100);
    for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 3 + 1);
    object.InstallAndUnlock(*version, payload, /*incarnation=*/5, kLiveFlag);
  }
  std::byte* Bytes() { return reinterpret_cast<std::byte*>(slot_.data()); }
  std::span<const std::byte> Copy() const {
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(slot_.data()), kCapacity);
  }
  ObjectRef Ref() const { return ObjectRef{{1, 0}, 5, kCapacity}; }

  std::vector<uint64_t> slot_;  // 8-byte aligned
};

TEST_F(ObjectCodecTest, ASlotsBytesDependOnlyOnItsLastState) {
  // Shrink the payload: the old tail is cleared, so the slot equals one that only ever held the new state.
  LocalObject object(Bytes(), kCapacity);
  auto version = object.Lock(10);
  ASSERT_TRUE(version.ok());
  std::vector<std::byte> shorter(13, std::byte{0x5a});
  object.InstallAndUnlock(*version, shorter, 5, kLiveFlag);

  std::vector<uint64_t> fresh(kCapacity / 8, 0);
  LocalObject other(reinterpret_cast<std::byte*>(fresh.data()), kCapacity);
  ASSERT_TRUE(other.Lock(10).ok());
  other.InstallAtVersionAndUnlock(*version + 1, shorter, 5, kLiveFlag);
  EXPECT_EQ(fresh, slot_);
}

TEST_F(ObjectCodecTest, ValidCopyIsAcceptedWithItsPayload) {
  ObjectCheck check = CheckObjectCopy(Copy(), Ref());
  ASSERT_EQ(check.verdict, Verdict::kValid);
  ASSERT_EQ(check.payload.size(), 100u);
  EXPECT_EQ(check.payload[7], static_cast<std::byte>(22));
  EXPECT_EQ(check.header.version(), 1u);
  EXPECT_EQ(check.header.incarnation, 5u);
}

TEST_F(ObjectCodecTest, EveryFlippedCoveredBitIsRejected) {
  const size_t covered = kHeaderBytes + 100;
  for (size_t i = 0; i < covered; ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<std::byte> copy(Copy().begin(), Copy().end());
      copy[i] ^= static_cast<std::byte>(1 << bit);
      Verdict v = CheckObjectCopy(copy, Ref()).verdict;
      ASSERT_NE(v, Verdict::kValid) << "byte " << i << " bit " << bit;
    }
  }
}

TEST_F(ObjectCodecTest, LockBitMeansRetry) {
  std::vector<std::byte> copy(Copy().begin(), Copy().end());
  copy[kVersionOffset + 7] |= std::byte{0x80};
  EXPECT_EQ(CheckObjectCopy(copy, Ref()).verdict, Verdict::kLocked);
}

TEST_F(ObjectCodecTest, TruncatedCopiesAreTorn) {
  for (size_t n = 0; n < kCapacity; n += 7) {
    EXPECT_EQ(CheckObjectCopy(Copy().first(n), Ref()).verdict, Verdict::kTorn) << n;
  }
}

TEST_F(ObjectCodecTest, LyingLengthNeverReadsPastTheCopy) {
  for (uint32_t length : {uint32_t{kCapacity - kHeaderBytes + 1}, kCapacity, 0x7fffffffu, 0xffffffffu}) {
    std::vector<std::byte> copy(Copy().begin(), Copy().end());
    std::memcpy(copy.data() + kLengthOffset, &length, 4);
    EXPECT_EQ(CheckObjectCopy(copy, Ref()).verdict, Verdict::kTorn) << length;
  }
}

TEST_F(ObjectCodecTest, ConsistentCopiesOfOtherIncarnationsOrShapesAreRefused) {
  ObjectRef stale = Ref();
  stale.incarnation = 4;
  EXPECT_EQ(CheckObjectCopy(Copy(), stale).verdict, Verdict::kStale);
  EXPECT_EQ(VerdictStatus(Verdict::kStale, stale).code(), absl::StatusCode::kNotFound);
  ObjectRef bigger = Ref();
  bigger.capacity = 128;  // the copy is long enough, but the slot says 256
  EXPECT_EQ(CheckObjectCopy(Copy(), bigger).verdict, Verdict::kWrongShape);
  // A freed object (not live) is stale even at the same incarnation.
  LocalObject object(Bytes(), kCapacity);
  auto version = object.Lock(10);
  ASSERT_TRUE(version.ok());
  object.InstallAndUnlock(*version, {}, 5, /*flags=*/0);
  EXPECT_EQ(CheckObjectCopy(Copy(), Ref()).verdict, Verdict::kStale);
}

TEST_F(ObjectCodecTest, HeaderFromOneWriteAndPayloadFromAnotherIsTorn) {
  std::vector<std::byte> first(Copy().begin(), Copy().end());
  LocalObject object(Bytes(), kCapacity);
  auto version = object.Lock(10);
  ASSERT_TRUE(version.ok());
  std::vector<std::byte> payload(100, std::byte{9});
  object.InstallAndUnlock(*version, payload, 5, kLiveFlag);
  std::vector<std::byte> mixed(Copy().begin(), Copy().end());
  std::memcpy(mixed.data() + kHeaderBytes + 50, first.data() + kHeaderBytes + 50, 8);  // 8 old bytes
  EXPECT_EQ(CheckObjectCopy(mixed, Ref()).verdict, Verdict::kTorn);
  std::memcpy(mixed.data(), first.data(), kHeaderBytes);  // old header, new payload
  EXPECT_EQ(CheckObjectCopy(mixed, Ref()).verdict, Verdict::kTorn);
}

TEST_F(ObjectCodecTest, LockingIsExclusiveAndVersioned) {
  LocalObject object(Bytes(), kCapacity);
  auto version = object.TryLock();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(object.TryLock().status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(object.Lock(3).status().code(), absl::StatusCode::kUnavailable);
  object.Unlock(*version);
  EXPECT_EQ(object.version_word(), *version);
  EXPECT_EQ(object.TryLock(*version + 1).status().code(), absl::StatusCode::kAborted);  // version moved on?
  auto again = object.TryLock(*version);
  ASSERT_TRUE(again.ok());
  object.InstallAndUnlock(*again, {}, 5, kLiveFlag);
  EXPECT_EQ(object.version_word(), *version + 1);
}

}  // namespace
}  // namespace fathom::object
