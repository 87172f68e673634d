// The one step from a configuration to the next (transition.h): epoch, canonical form, validity and size
// in one place; removals that move replicas only for a member that failed.
#include "coordinator/transition.h"

#include <string>

#include "coordinator/admission.h"
#include "gtest/gtest.h"
#include "platform/memory/global_address.h"

namespace fathom::coordinator {
namespace {

MemberInfo Member(uint32_t id) {
  MemberInfo m;
  m.set_node_id(id);
  m.set_control_address("127.0.0.1:" + std::to_string(7000 + id));
  m.set_memory_bytes(uint64_t{64} << 20);
  m.set_incarnation(1);
  m.set_backups_per_region(1);
  MemberRegion* r = m.add_regions();
  r->set_region_id(memory::NodeRegionId(id, 1));
  r->set_size_bytes(16 << 20);
  return m;
}

// Three members admitted through NextConfiguration, node 1 the manager: epoch 3.
Configuration ThreeMembers() {
  Configuration c;
  for (uint32_t id : {3, 1, 2}) {
    absl::StatusOr<Configuration> next = NextConfiguration(c, [id](Configuration& n) {
      if (absl::Status s = AdmitMember(&n, Member(id)); !s.ok()) return s;
      SetManager(&n, 1);
      return absl::OkStatus();
    });
    EXPECT_TRUE(next.ok()) << next.status();
    c = *next;
  }
  return c;
}

TEST(TransitionTest, TheNextConfigurationHasTheNextEpochAndIsCanonical) {
  const Configuration c = ThreeMembers();
  EXPECT_EQ(c.epoch(), 3u);
  EXPECT_EQ(c.manager_id(), 1u);
  ASSERT_EQ(c.members_size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.members(i).node_id(), static_cast<uint32_t>(i + 1)) << "sorted by id";
  Configuration canonical = c;
  Canonicalize(&canonical);
  EXPECT_EQ(canonical.SerializeAsString(), c.SerializeAsString());
}

TEST(TransitionTest, AChangesErrorIsReturnedAndAnInvalidResultRefused) {
  const Configuration c = ThreeMembers();
  absl::StatusOr<Configuration> refused =
      NextConfiguration(c, [](Configuration&) { return absl::FailedPreconditionError("no"); });
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  absl::StatusOr<Configuration> invalid = NextConfiguration(c, [](Configuration& n) {
    n.mutable_regions(0)->set_primary(n.regions(0).backups(0));  // primary and backup on one node
    return absl::OkStatus();
  });
  EXPECT_TRUE(absl::IsInvalidArgument(invalid.status())) << invalid.status();
  absl::StatusOr<Configuration> too_big = NextConfiguration(c, [](Configuration& n) {
    n.mutable_members(0)->set_failure_domain(std::string(kMaxEncodedConfigurationBytes, 'x'));
    return absl::OkStatus();
  });
  EXPECT_TRUE(absl::IsResourceExhausted(too_big.status())) << too_big.status();
}

TEST(TransitionTest, OnlyAFailedMemberHasItsRegionsPromoted) {
  const Configuration c = ThreeMembers();
  const uint32_t region = memory::NodeRegionId(2, 1);
  for (ExpiredMember how : {ExpiredMember::kUnseen, ExpiredMember::kFailed}) {
    absl::StatusOr<Configuration> next = NextConfiguration(c, [how](Configuration& n) {
      RemoveDeparted(&n, 2, how);
      SetManager(&n, 1);
      return absl::OkStatus();
    });
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(FindMember(*next, 2), nullptr);
    const RegionPlacement* r = FindRegion(*next, region);
    ASSERT_NE(r, nullptr);
    if (how == ExpiredMember::kFailed) {
      EXPECT_NE(r->primary(), 2u) << "promoted to its backup";
    } else {
      EXPECT_EQ(r->primary(), 2u) << "kept where the logs put it";
    }
  }
}

TEST(TransitionTest, AManagerThatLeftIsNone) {
  const Configuration c = ThreeMembers();
  absl::StatusOr<Configuration> next = NextConfiguration(c, [](Configuration& n) {
    RemoveDeparted(&n, 1, ExpiredMember::kUnseen);
    SetManager(&n, 1);
    return absl::OkStatus();
  });
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->manager_id(), 0u);
}

TEST(TransitionTest, AnEpochAloneIsNoChange) {
  const Configuration c = ThreeMembers();
  absl::StatusOr<Configuration> same = NextConfiguration(c, [](Configuration&) { return absl::OkStatus(); });
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->epoch(), c.epoch() + 1);
  EXPECT_FALSE(Changes(c, *same));
  absl::StatusOr<Configuration> other = NextConfiguration(c, [](Configuration& n) {
    SetManager(&n, 2);
    return absl::OkStatus();
  });
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_TRUE(Changes(c, *other));
}

}  // namespace
}  // namespace fathom::coordinator
