// CONFIG-APPLIED's payload (platform/node/config_applied.h): what decodes, and the clear error for what
// does not (flipped version, truncated, padded, epoch 0).
#include "platform/node/config_applied.h"

#include <string>

#include "gtest/gtest.h"

namespace fathom::node {
namespace {

TEST(ConfigAppliedTest, RoundTrips) {
  const std::string payload = EncodeConfigApplied(0x0102030405060708);
  EXPECT_EQ(payload.size(), kConfigAppliedBytes);
  absl::StatusOr<uint64_t> epoch = DecodeConfigApplied(payload);
  ASSERT_TRUE(epoch.ok()) << epoch.status();
  EXPECT_EQ(*epoch, 0x0102030405060708u);
}

TEST(ConfigAppliedTest, RefusesWhatIsNotOne) {
  const std::string good = EncodeConfigApplied(7);
  std::string version = good;
  version[0] ^= 0x40;
  std::string zero = EncodeConfigApplied(7);
  zero.replace(1, 8, std::string(8, '\0'));
  for (const std::string& bad : {version, good.substr(0, 8), good + "x", std::string(), zero}) {
    absl::StatusOr<uint64_t> epoch = DecodeConfigApplied(bad);
    EXPECT_EQ(epoch.status().code(), absl::StatusCode::kInvalidArgument) << bad.size() << " bytes";
  }
}

TEST(ConfigAppliedTest, APeerIsHeardAtItsLatestEpochUntilItsConnectionGoes) {
  ConfigAnnouncements announcements;
  EXPECT_EQ(announcements.heard_from(2), 0u);
  ASSERT_TRUE(announcements.OnMessage({.peer = 2, .type = kConfigAppliedMessage, .payload = EncodeConfigApplied(5)}).ok());
  // An older epoch (a map set back by hand) does not lower what was heard.
  ASSERT_TRUE(announcements.OnMessage({.peer = 2, .type = kConfigAppliedMessage, .payload = EncodeConfigApplied(4)}).ok());
  EXPECT_EQ(announcements.heard_from(2), 5u);
  const std::string truncated = EncodeConfigApplied(9).substr(0, 5);
  EXPECT_FALSE(announcements.OnMessage({.peer = 2, .type = kConfigAppliedMessage, .payload = truncated}).ok());
  EXPECT_EQ(announcements.heard_from(2), 5u);
  announcements.OnRemoved(2);
  EXPECT_EQ(announcements.heard_from(2), 0u);
  ASSERT_TRUE(announcements.OnMessage({.peer = 2, .type = kConfigAppliedMessage, .payload = EncodeConfigApplied(6)}).ok());
  announcements.OnConnected(2);
  EXPECT_EQ(announcements.heard_from(2), 0u);
  EXPECT_TRUE(announcements.due(6));
}

}  // namespace
}  // namespace fathom::node
