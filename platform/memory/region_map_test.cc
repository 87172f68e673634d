#include "platform/memory/region_map.h"

#include "gtest/gtest.h"
#include "platform/memory/global_address.h"

namespace fathom::memory {
namespace {

TEST(RegionMapTest, ByOwnerBacksUpOnTheNextMembersWrappingAround) {
  const RegionMap map = RegionMap::ByOwner(4, {3, 1, 2, 1}, 1);
  EXPECT_EQ(map.members(), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(*map.PrimaryOf(NodeRegionId(2, 5)), 2u);
  EXPECT_EQ(*map.BackupsOf(NodeRegionId(2, 5)), (std::vector<uint32_t>{3}));
  EXPECT_EQ(*map.BackupsOf(NodeRegionId(3, 1)), (std::vector<uint32_t>{1}));
  // A region of a node outside the cluster: served by it (if reachable), never written.
  EXPECT_EQ(*map.PrimaryOf(NodeRegionId(7, 1)), 7u);
  EXPECT_EQ(map.BackupsOf(NodeRegionId(7, 1)).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(map.PrimaryOf(5).status().code(), absl::StatusCode::kNotFound);  // no owner
  // f backups need f+1 members.
  const RegionMap small = RegionMap::ByOwner(1, {1, 2}, 2);
  absl::StatusOr<std::vector<uint32_t>> backups = small.BackupsOf(NodeRegionId(1, 1));
  EXPECT_EQ(backups.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(backups.status().message().find("1 of 2 backups"), std::string::npos) << backups.status();
}

TEST(RegionMapTest, PlacedAnswersOnlyForListedRegions) {
  absl::flat_hash_map<uint32_t, RegionReplicas> regions;
  regions[NodeRegionId(1, 1)] = {1, {3}};
  regions[NodeRegionId(2, 1)] = {2, {4}};  // 4 left
  const RegionMap map = RegionMap::Placed(9, {1, 2, 3}, 1, regions);
  EXPECT_EQ(*map.PrimaryOf(NodeRegionId(1, 1)), 1u);
  EXPECT_EQ(*map.BackupsOf(NodeRegionId(1, 1)), (std::vector<uint32_t>{3}));
  absl::Status left = map.BackupsOf(NodeRegionId(2, 1)).status();
  EXPECT_EQ(left.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(left.message().find("node 4 (backup of region"), std::string::npos) << left;
  EXPECT_EQ(map.ReplicasOf(NodeRegionId(2, 1))->backups, (std::vector<uint32_t>{4}));
  EXPECT_EQ(map.PrimaryOf(NodeRegionId(3, 1)).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(map.BackupsOf(NodeRegionId(3, 1)).status().code(), absl::StatusCode::kNotFound);
}

// Node 2 came back under its id: recovery gave its region to node 3, which it now backs up. It serves none
// of its own memory, so nothing may be placed on it (kv tables placed buckets there and failed).
TEST(RegionMapTest, AMemberServesItsOwnMemoryOnlyWhileItIsThePrimaryOfSomeOfIt) {
  absl::flat_hash_map<uint32_t, RegionReplicas> regions;
  regions[NodeRegionId(1, 1)] = {1, {3}};
  regions[NodeRegionId(2, 1)] = {3, {2}};
  regions[NodeRegionId(3, 1)] = {3, {1}};
  const RegionMap map = RegionMap::Placed(9, {1, 2, 3}, 1, regions);
  EXPECT_TRUE(map.ServesOwnMemory(1));
  EXPECT_FALSE(map.ServesOwnMemory(2));
  EXPECT_TRUE(map.ServesOwnMemory(3));
  EXPECT_FALSE(map.ServesOwnMemory(4));  // no member
  const RegionMap static_rule = RegionMap::ByOwner(1, {1, 2}, 1);
  EXPECT_TRUE(static_rule.ServesOwnMemory(2));
  EXPECT_FALSE(static_rule.ServesOwnMemory(3));
}

TEST(RegionMapTest, DirectoryKeepsAConfigurationsMapOverADefault) {
  RegionDirectory directory;
  EXPECT_EQ(directory.Current()->epoch(), 0u);
  const uint64_t g0 = directory.generation();
  EXPECT_TRUE(directory.SetIfUnset(RegionMap::ByOwner(1, {1, 2}, 1)));
  EXPECT_GT(directory.generation(), g0);
  directory.Set(RegionMap::Placed(5, {1, 2}, 1, {}));
  EXPECT_FALSE(directory.SetIfUnset(RegionMap::ByOwner(1, {1, 2}, 1)));
  EXPECT_EQ(directory.Current()->epoch(), 5u);
}

TEST(RegionMapTest, TheFencedEpochOnlyMovesOn) {
  RegionDirectory directory;
  EXPECT_EQ(directory.fenced(), 0u);
  directory.MarkFenced(6);
  directory.MarkFenced(4);
  EXPECT_EQ(directory.fenced(), 6u);
}

}  // namespace
}  // namespace fathom::memory
