#include "coordinator/admission.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "coordinator/placement.h"
#include "coordinator/remap.h"
#include "gtest/gtest.h"
#include "platform/memory/global_address.h"

namespace fathom::coordinator {
namespace {

MemberInfo Member(uint32_t id, int regions, uint32_t f, std::string domain = "") {
  MemberInfo m;
  m.set_node_id(id);
  m.set_control_address("127.0.0.1:" + std::to_string(7000 + id));
  m.set_memory_bytes(uint64_t{64} << 20);
  m.set_incarnation(1);
  m.set_backups_per_region(f);
  m.set_failure_domain(domain);
  for (int i = 1; i <= regions; ++i) {
    MemberRegion* r = m.add_regions();
    r->set_region_id(memory::NodeRegionId(id, i));
    r->set_size_bytes(16 << 20);
  }
  return m;
}

// What a coordinator does with a member joining: an earlier incarnation's entry goes, the new one is admitted.
absl::Status Join(Configuration& c, const MemberInfo& m) {
  RemoveMember(&c, m.node_id());
  absl::Status s = AdmitMember(&c, m);
  if (s.ok()) EXPECT_TRUE(ValidateConfiguration(c).ok()) << ValidateConfiguration(c);
  return s;
}

std::map<uint32_t, std::string> Placements(const Configuration& c) {
  std::map<uint32_t, std::string> out;
  for (const RegionPlacement& r : c.regions()) out[r.region_id()] = r.DebugString();
  return out;
}

TEST(AdmissionTest, EachJoiningMemberBringsItsRegionsWithFBackups) {
  Configuration c;
  for (uint32_t id : {1, 2, 3}) ASSERT_TRUE(Join(c, Member(id, 4, 1)).ok());
  EXPECT_EQ(c.backups_per_region(), 1u);
  ASSERT_EQ(c.regions_size(), 12);
  std::map<uint32_t, int> backups_on;
  for (const RegionPlacement& r : c.regions()) {
    EXPECT_EQ(r.primary(), memory::OwnerOfRegion(r.region_id()));
    ASSERT_EQ(r.backups_size(), 1) << r.DebugString();
    EXPECT_NE(r.backups(0), r.primary());
    ++backups_on[r.backups(0)];
  }
  // Balanced by bytes held: 1 and 2 back each other up, 3's regions alternate between them.
  EXPECT_EQ(backups_on[1], 6);
  EXPECT_EQ(backups_on[2], 6);
  EXPECT_EQ(backups_on[3], 0);
}

// The CM stamps each admitted incarnation with the epoch that lists it first: transaction recovery tells a
// restarted node's old transactions from its new ones by it. The region map carries it, and the CM.
TEST(AdmissionTest, AnAdmittedMemberCarriesTheEpochThatAdmitsIt) {
  Configuration c;
  c.set_epoch(4);
  ASSERT_TRUE(Join(c, Member(1, 1, 1)).ok());
  c.set_epoch(7);
  ASSERT_TRUE(Join(c, Member(2, 1, 1)).ok());
  c.set_manager_id(1);
  EXPECT_EQ(FindMember(c, 1)->joined_epoch(), 5u);
  EXPECT_EQ(FindMember(c, 2)->joined_epoch(), 8u);
  EXPECT_TRUE(ListsRegistration(*FindMember(c, 2), Member(2, 1, 1)));
  EXPECT_FALSE(ListsRegistration(*FindMember(c, 2), Member(2, 2, 1)));
  c.set_epoch(8);
  const memory::RegionMap map = RegionMapOf(c);
  EXPECT_EQ(map.manager(), 1u);
  EXPECT_FALSE(map.CoordinatorGone(2, 8));
  EXPECT_TRUE(map.CoordinatorGone(2, 7)) << "a transaction of an earlier incarnation of node 2";
  EXPECT_TRUE(map.CoordinatorGone(3, 8)) << "node 3 is no member";
  // A static cluster's map knows no coordinators: none is ever gone.
  EXPECT_FALSE(memory::RegionMap::ByOwner(1, {1, 2}, 1).CoordinatorGone(3, 1));
}

TEST(AdmissionTest, RegionsThatNeverHadAllBackupsAreFilledAsMembersArrive) {
  Configuration c;
  ASSERT_TRUE(Join(c, Member(1, 2, 2)).ok());
  EXPECT_EQ(FindRegion(c, memory::NodeRegionId(1, 1))->backups_size(), 0);  // nobody to back it up yet
  ASSERT_TRUE(Join(c, Member(2, 2, 2)).ok());
  EXPECT_EQ(FindRegion(c, memory::NodeRegionId(1, 1))->backups_size(), 1);
  ASSERT_TRUE(Join(c, Member(3, 2, 2)).ok());
  for (const RegionPlacement& r : c.regions()) {
    EXPECT_EQ(r.backups_size(), 2) << r.DebugString();
    std::set<uint32_t> nodes(r.backups().begin(), r.backups().end());
    nodes.insert(r.primary());
    EXPECT_EQ(nodes.size(), 3u);
  }
}

TEST(AdmissionTest, AMembershipChangeNeverMovesAPlacedReplica) {
  Configuration c;
  for (uint32_t id : {1, 2, 3}) ASSERT_TRUE(Join(c, Member(id, 4, 1)).ok());
  const std::map<uint32_t, std::string> placed = Placements(c);

  // Node 2 leaves: its regions keep their primary on it, and the regions it backs up keep it as backup.
  ASSERT_TRUE(RemoveMember(&c, 2));
  EXPECT_EQ(Placements(c), placed);
  // A new member joins: only its own regions are added.
  ASSERT_TRUE(Join(c, Member(4, 4, 1)).ok());
  std::map<uint32_t, std::string> now = Placements(c);
  for (const auto& [region, placement] : placed) EXPECT_EQ(now[region], placement) << region;
  EXPECT_EQ(now.size(), placed.size() + 4);
  for (int i = 1; i <= 4; ++i) {
    const RegionPlacement* r = FindRegion(c, memory::NodeRegionId(4, i));
    ASSERT_NE(r, nullptr);
    ASSERT_EQ(r->backups_size(), 1);
    EXPECT_NE(r->backups(0), 2u);  // not on the node that left
  }
  // Node 2 comes back (a new incarnation): still nothing moves.
  MemberInfo again = Member(2, 4, 1);
  again.set_incarnation(2);
  ASSERT_TRUE(Join(c, again).ok());
  now = Placements(c);
  for (const auto& [region, placement] : placed) EXPECT_EQ(now[region], placement) << region;
}

// After a failure (DropReplicasOf) each of the failed member's regions has its backup as primary, and
// every region that lost a replica gets a new backup that fills (receives a copy) before it can be
// promoted. Joining members never give such a region an empty backup.
TEST(AdmissionTest, AFailedMembersRegionsArePromotedAndGetFillingBackups) {
  Configuration c;
  for (uint32_t id : {1, 2, 3}) ASSERT_TRUE(Join(c, Member(id, 4, 1)).ok());
  std::map<uint32_t, uint32_t> backup_of;  // node 2's regions: their backup
  for (const RegionPlacement& r : c.regions()) {
    EXPECT_TRUE(r.replicated()) << r.DebugString();
    if (r.primary() == 2) backup_of[r.region_id()] = r.backups(0);
  }
  ASSERT_EQ(backup_of.size(), 4u);
  RemoveMember(&c, 2);
  ASSERT_TRUE(DropReplicasOf(&c, 2));
  ASSERT_TRUE(ValidateConfiguration(c).ok()) << ValidateConfiguration(c);
  for (const RegionPlacement& r : c.regions()) {
    if (backup_of.contains(r.region_id())) EXPECT_EQ(r.primary(), backup_of[r.region_id()]);
    EXPECT_NE(r.primary(), 2u);
    ASSERT_EQ(r.backups_size(), 1) << r.DebugString();
    EXPECT_NE(r.backups(0), 2u) << r.DebugString();
    // Every region that had a replica on node 2 fills its new backup; the others are as they were.
    const bool touched = backup_of.contains(r.region_id()) || r.filling_size() > 0;
    if (touched) EXPECT_EQ(std::vector<uint32_t>(r.filling().begin(), r.filling().end()),
                           std::vector<uint32_t>{r.backups(0)}) << r.DebugString();
  }
  const std::map<uint32_t, std::string> after_failure = Placements(c);
  ASSERT_TRUE(Join(c, Member(4, 4, 1)).ok());
  MemberInfo again = Member(2, 4, 1);
  again.set_incarnation(2);
  ASSERT_TRUE(Join(c, again).ok());
  std::map<uint32_t, std::string> now = Placements(c);
  for (const auto& [region, placement] : after_failure) EXPECT_EQ(now[region], placement) << region;
}

// A backup still filling holds part of the data: it is never promoted. Once its primary says the copy is
// done (FinishFilling), it is.
TEST(AdmissionTest, AFillingBackupIsPromotedOnlyOnceFilled) {
  Configuration c;
  for (uint32_t id : {1, 2, 3}) ASSERT_TRUE(Join(c, Member(id, 1, 1)).ok());
  RemoveMember(&c, 3);
  ASSERT_TRUE(DropReplicasOf(&c, 3));
  // Node 1's region: primary 1; its backup was 2 or 3. Find a region with a filling backup.
  const RegionPlacement* filling = nullptr;
  for (const RegionPlacement& r : c.regions()) {
    if (r.filling_size() == 1) filling = &r;
  }
  ASSERT_NE(filling, nullptr);
  const uint32_t region = filling->region_id(), primary = filling->primary(), backup = filling->filling(0);
  Configuration unfinished = c;
  RemoveMember(&unfinished, primary);
  ASSERT_TRUE(DropReplicasOf(&unfinished, primary));
  EXPECT_EQ(FindRegion(unfinished, region), nullptr) << "a filling backup was promoted";
  EXPECT_NE(std::find(unfinished.lost_regions().begin(), unfinished.lost_regions().end(), region),
            unfinished.lost_regions().end());

  EXPECT_FALSE(FinishFilling(&c, region, backup, backup)) << "only the primary finishes a fill";
  ASSERT_TRUE(FinishFilling(&c, region, primary, backup));
  EXPECT_EQ(FindRegion(c, region)->filling_size(), 0);
  ASSERT_TRUE(ValidateConfiguration(c).ok()) << ValidateConfiguration(c);
  RemoveMember(&c, primary);
  ASSERT_TRUE(DropReplicasOf(&c, primary));
  ASSERT_NE(FindRegion(c, region), nullptr);
  EXPECT_EQ(FindRegion(c, region)->primary(), backup);
}

// A primary marks every copy it finished in one pass with one configuration (FinishFillingUpdate):
// each configuration costs every member an apply and holds up transactions planned under the last one.
TEST(AdmissionTest, OneUpdateFinishesEveryCopyAPassMade) {
  Configuration c;
  for (uint32_t id : {1, 2, 3}) ASSERT_TRUE(Join(c, Member(id, 4, 1)).ok());  // four regions each
  RemoveMember(&c, 3);
  ASSERT_TRUE(DropReplicasOf(&c, 3));
  // Some primary now has at least two regions with a backup filling (its own, and node 3's it took over).
  std::map<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>> filling_by_primary;
  for (const RegionPlacement& r : c.regions()) {
    for (uint32_t b : r.filling()) filling_by_primary[r.primary()].emplace_back(r.region_id(), b);
  }
  auto most = std::max_element(filling_by_primary.begin(), filling_by_primary.end(),
                               [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  ASSERT_NE(most, filling_by_primary.end());
  const uint32_t primary = most->first;
  const std::vector<std::pair<uint32_t, uint32_t>> copies = most->second;
  ASSERT_GE(copies.size(), 2u) << "the premise: one primary fills two regions";

  const uint32_t other = primary == 1 ? 2 : 1;
  EXPECT_TRUE(absl::IsAlreadyExists(FinishFillingUpdate(other, copies)(c))) << "only the primary finishes its fills";
  ASSERT_TRUE(FinishFillingUpdate(primary, copies)(c).ok());
  for (const auto& [region, backup] : copies) EXPECT_EQ(FindRegion(c, region)->filling_size(), 0) << region;
  ASSERT_TRUE(ValidateConfiguration(c).ok()) << ValidateConfiguration(c);
  EXPECT_TRUE(absl::IsAlreadyExists(FinishFillingUpdate(primary, copies)(c))) << "nothing left to finish";
}

// Only a backup that is still a member is promoted; with no replica left the region is lost.
TEST(AdmissionTest, OnlyAMemberBackupIsPromotedAndARegionWithNoneLeftIsLost) {
  Configuration c;
  for (uint32_t id : {1, 2, 3}) ASSERT_TRUE(Join(c, Member(id, 1, 2)).ok());  // f = 2: three replicas each
  const uint32_t region = memory::NodeRegionId(1, 1);
  const std::vector<uint32_t> backups(FindRegion(c, region)->backups().begin(), FindRegion(c, region)->backups().end());
  ASSERT_EQ(backups.size(), 2u);
  RemoveMember(&c, backups[0]);  // left without failing: still listed as a backup, not a member
  RemoveMember(&c, 1);
  ASSERT_TRUE(DropReplicasOf(&c, 1));
  EXPECT_EQ(FindRegion(c, region)->primary(), backups[1]);
  RemoveMember(&c, backups[1]);
  ASSERT_TRUE(DropReplicasOf(&c, backups[1]));
  EXPECT_EQ(FindRegion(c, region), nullptr);
  EXPECT_NE(std::find(c.lost_regions().begin(), c.lost_regions().end(), region), c.lost_regions().end());
  EXPECT_FALSE(DropReplicasOf(&c, 9));
}

// A member that left (its replicas stay listed) and comes back without its memory (no log to rebuild it
// from) must not be primary of its old regions again: it would serve them empty. Its replicas are dropped
// as for a failure; a region of its own that was lost stays lost. One that comes back with its memory (a
// restart from its log) gets them back (AMembershipChangeNeverMovesAPlacedReplica).
TEST(AdmissionTest, AMemberBackWithEmptyMemoryGetsNoneOfItsOldReplicas) {
  Configuration c;
  for (uint32_t id : {1, 2, 3}) ASSERT_TRUE(Join(c, Member(id, 2, 1)).ok());
  ASSERT_TRUE(RemoveMember(&c, 2));  // a Leave: nothing moves
  MemberInfo empty = Member(2, 2, 1);
  empty.set_incarnation(2);
  empty.set_starts_empty(true);
  ASSERT_TRUE(Join(c, empty).ok());
  for (const RegionPlacement& r : c.regions()) {
    const bool own = memory::OwnerOfRegion(r.region_id()) == 2;
    EXPECT_NE(r.primary(), 2u) << "region " << r.region_id() << " served from empty memory";
    if (own) EXPECT_EQ(r.backups_size(), 1) << "its backup, promoted, has a new backup: " << r.DebugString();
    for (uint32_t b : r.backups()) {
      const bool filling = std::find(r.filling().begin(), r.filling().end(), b) != r.filling().end();
      if (b == 2) EXPECT_TRUE(filling) << "a backup on node 2 again must receive a copy first: " << r.DebugString();
    }
  }

  // With no replica left, a region of its own is lost for good: not placed again on empty memory.
  Configuration lone;
  ASSERT_TRUE(Join(lone, Member(1, 1, 0)).ok());  // f = 0
  ASSERT_TRUE(RemoveMember(&lone, 1));
  ASSERT_TRUE(DropReplicasOf(&lone, 1));
  MemberInfo back = Member(1, 1, 0);
  back.set_incarnation(2);
  back.set_starts_empty(true);
  ASSERT_TRUE(Join(lone, back).ok());
  EXPECT_EQ(FindRegion(lone, memory::NodeRegionId(1, 1)), nullptr);
  EXPECT_EQ(lone.lost_regions_size(), 1);
}

TEST(AdmissionTest, ReplicasSpreadOverFailureDomains) {
  Configuration c;
  // 1 and 2 share a rack; 3 and 4 share another. 2 is the least loaded, but shares 1's rack.
  ASSERT_TRUE(Join(c, Member(1, 4, 1, "rack-a")).ok());
  ASSERT_TRUE(Join(c, Member(2, 0, 1, "rack-a")).ok());
  ASSERT_TRUE(Join(c, Member(3, 0, 1, "rack-b")).ok());
  for (int i = 1; i <= 4; ++i) {
    const RegionPlacement* r = FindRegion(c, memory::NodeRegionId(1, i));
    ASSERT_EQ(r->backups_size(), 1);
    // Region 1's regions got their backup when 2 joined (the only choice then) and keep it.
    EXPECT_EQ(r->backups(0), 2u);
  }
  ASSERT_TRUE(Join(c, Member(4, 4, 1, "rack-b")).ok());
  for (int i = 1; i <= 4; ++i) {
    const RegionPlacement* r = FindRegion(c, memory::NodeRegionId(4, i));
    ASSERT_EQ(r->backups_size(), 1);
    // Not 3 (the same rack as 4, and the least loaded): 1 or 2, in the other rack.
    EXPECT_TRUE(r->backups(0) == 1 || r->backups(0) == 2) << r->DebugString();
  }
}

TEST(AdmissionTest, RefusesAnotherFAndAClientComingBackWithReplicas) {
  Configuration c;
  ASSERT_TRUE(Join(c, Member(1, 2, 1)).ok());
  ASSERT_TRUE(Join(c, Member(2, 2, 1)).ok());
  absl::Status s = Join(c, Member(3, 2, 2));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("node 3 runs with 2 backups per region; the cluster keeps 1"), std::string::npos) << s;
  EXPECT_EQ(FindMember(c, 3), nullptr);

  MemberInfo client = Member(2, 0, 1);
  client.set_client_only(true);
  s = Join(c, client);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;

  // A client-only member is never a region's replica.
  MemberInfo other = Member(9, 0, 0);
  other.set_client_only(true);
  ASSERT_TRUE(Join(c, other).ok());
  ASSERT_TRUE(Join(c, Member(4, 2, 1)).ok());
  for (const RegionPlacement& r : c.regions()) {
    EXPECT_NE(r.primary(), 9u);
    for (uint32_t b : r.backups()) EXPECT_NE(b, 9u);
  }
  // A member listing a region that is not its own is refused.
  MemberInfo liar = Member(5, 1, 1);
  liar.mutable_regions(0)->set_region_id(memory::NodeRegionId(1, 1));
  EXPECT_EQ(Join(c, liar).code(), absl::StatusCode::kInvalidArgument);
}

TEST(AdmissionTest, TheDataPlaneReadsThePlacement) {
  Configuration c;
  for (uint32_t id : {1, 2, 3}) ASSERT_TRUE(Join(c, Member(id, 2, 1)).ok());
  c.set_epoch(7);
  MemberInfo client = Member(9, 0, 1);
  client.set_client_only(true);
  ASSERT_TRUE(Join(c, client).ok());
  const uint32_t region = memory::NodeRegionId(3, 1);
  const RegionPlacement* placed = FindRegion(c, region);
  memory::RegionMap map = RegionMapOf(c);
  EXPECT_EQ(map.epoch(), 7u);
  EXPECT_EQ(map.members(), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(*map.PrimaryOf(region), 3u);
  EXPECT_EQ(*map.BackupsOf(region), (std::vector<uint32_t>{placed->backups(0)}));
  // Its backup leaves: writes to the region are Unavailable (until recovery), the primary still serves reads.
  RemoveMember(&c, placed->backups(0));
  map = RegionMapOf(c);
  EXPECT_EQ(map.BackupsOf(region).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(*map.PrimaryOf(region), 3u);
  EXPECT_EQ(map.PrimaryOf(memory::NodeRegionId(8, 1)).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fathom::coordinator
