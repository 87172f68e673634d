#include "platform/fabric/wire.h"

#include "gtest/gtest.h"
#include "platform/fabric/fabric.h"

namespace fathom::fabric {
namespace {

RegionDescriptor Sample() {
  RegionDescriptor d;
  d.base = 0x7f0012340000;
  d.length = 64 << 20;
  d.remote_key = std::string("\x01\x02\x00\xff packed key", 15);
  return d;
}

TEST(RegionDescriptorTest, RoundTrips) {
  auto parsed = RegionDescriptor::Parse(Sample().Serialize());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->base, Sample().base);
  EXPECT_EQ(parsed->length, Sample().length);
  EXPECT_EQ(parsed->remote_key, Sample().remote_key);
}

TEST(RegionDescriptorTest, EveryFlippedByteIsRejected) {
  const std::string good = Sample().Serialize();
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t bit : {0x01, 0x80}) {
      std::string bad = good;
      bad[i] ^= bit;
      EXPECT_FALSE(RegionDescriptor::Parse(bad).ok()) << "byte " << i << " bit " << int(bit);
    }
  }
}

TEST(RegionDescriptorTest, EveryTruncationIsRejected) {
  const std::string good = Sample().Serialize();
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(RegionDescriptor::Parse(good.substr(0, n)).ok()) << n;
  }
  EXPECT_FALSE(RegionDescriptor::Parse(good + "x").ok());
}

TEST(RegionDescriptorTest, LyingKeyLengthIsRejected) {
  std::string bad = Sample().Serialize();
  bad[20] = 100;  // claims a 100-byte key
  auto parsed = RegionDescriptor::Parse(bad);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  bad[23] = 0x7f;  // claims a 2 GiB key
  EXPECT_EQ(RegionDescriptor::Parse(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RegionDescriptorTest, WrongChecksumIsDataLoss) {
  std::string bad = Sample().Serialize();
  bad.back() ^= 1;
  EXPECT_EQ(RegionDescriptor::Parse(bad).status().code(), absl::StatusCode::kDataLoss);
}

TEST(AddressTest, RoundTripsAndChecksKind) {
  std::string blob = EncodeAddress(FabricKind::kUcx, "worker address bytes");
  auto payload = DecodeAddress(FabricKind::kUcx, blob);
  ASSERT_TRUE(payload.ok());
  EXPECT_EQ(*payload, "worker address bytes");
  EXPECT_EQ(DecodeAddress(FabricKind::kSim, blob).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(AddressTest, CorruptionIsRejected) {
  const std::string good = EncodeAddress(FabricKind::kSim, "node 7");
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x10;
    EXPECT_FALSE(DecodeAddress(FabricKind::kSim, bad).ok()) << i;
  }
  for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(DecodeAddress(FabricKind::kSim, good.substr(0, n)).ok());
  std::string lying = good;
  lying[8] = 0x40;  // payload length 64, blob far shorter
  EXPECT_EQ(DecodeAddress(FabricKind::kSim, lying).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fathom::fabric
