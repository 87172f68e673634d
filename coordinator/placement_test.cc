#include "coordinator/placement.h"

#include <set>

#include "gtest/gtest.h"

namespace fathom::coordinator {
namespace {

TEST(PlacementTest, PicksDistinctLeastLoadedMembersPrimaryFirst) {
  std::vector<MemberLoad> loads = {{1, 0, 300, 3}, {2, 0, 100, 1}, {3, 0, 200, 2}, {4, 0, 100, 2}};
  absl::StatusOr<std::vector<uint32_t>> r = PlaceRegion(loads, 10, 3);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<uint32_t>{2, 4, 3}));
}

TEST(PlacementTest, RepeatedAllocationsBalanceMemory) {
  Configuration c;
  for (uint32_t id = 1; id <= 5; ++id) {
    MemberInfo* m = c.add_members();
    m->set_node_id(id);
    m->set_control_address("x");
  }
  uint32_t next = 1;
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<std::vector<uint32_t>> r = PlaceRegion(MemberLoads(c), 1 << 20, 2);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(std::set<uint32_t>(r->begin(), r->end()).size(), 2u);
    RegionPlacement* p = c.add_regions();
    p->set_region_id(next++);
    p->set_size_bytes(1 << 20);
    p->set_primary((*r)[0]);
    p->add_backups((*r)[1]);
  }
  // 100 replicas over 5 members: 20 each.
  for (const MemberLoad& l : MemberLoads(c)) EXPECT_EQ(l.replicas, 20u) << l.node_id;
}

TEST(PlacementTest, ClientOnlyMembersAreNeverCandidates) {
  Configuration c;
  for (uint32_t id : {1, 2, 3}) {
    MemberInfo* m = c.add_members();
    m->set_node_id(id);
    m->set_control_address("127.0.0.1:1");
    m->set_client_only(id == 2);
  }
  const std::vector<MemberLoad> loads = MemberLoads(c);
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[0].node_id, 1u);
  EXPECT_EQ(loads[1].node_id, 3u);
  EXPECT_EQ(*PlaceRegion(loads, 10, 2), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(PlaceRegion(loads, 10, 3).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(PlacementTest, NotEnoughMembersIsFailedPrecondition) {
  std::vector<MemberLoad> loads = {{1, 0, 0, 0}, {2, 0, 0, 0}};
  EXPECT_EQ(PlaceRegion(loads, 10, 3).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(PlaceRegion({}, 10, 1).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(PlacementTest, CapacityIsRespected) {
  std::vector<MemberLoad> loads = {{1, 100, 95, 1}, {2, 100, 0, 0}, {3, 0, 1000, 9}};
  absl::StatusOr<std::vector<uint32_t>> r = PlaceRegion(loads, 10, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<uint32_t>{2, 3}));  // node 1 is full; 3's capacity is unknown
  EXPECT_EQ(PlaceRegion(loads, 10, 3).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(PlacementTest, BadArgumentsAreInvalidArgument) {
  std::vector<MemberLoad> loads = {{1, 0, 0, 0}};
  EXPECT_EQ(PlaceRegion(loads, 0, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlaceRegion(loads, 10, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fathom::coordinator
