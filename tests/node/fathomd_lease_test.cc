// Leases over the node runtime with three fathomd processes and a real ZooKeeper (lease 1 s, ZooKeeper
// session 10 s, so every removal here is the lease's doing): a killed member leaves the configuration
// within the lease plus a bound (reported); a member stopped (SIGSTOP) longer than its lease is removed
// and stays removed although its session lives; resumed (SIGCONT), it finds itself removed, joins again by
// itself and talks to everyone. The CM reports each member's lease in its Stats.
#include <signal.h>

#include <iostream>

#include "tests/node/lease_fixture.h"

namespace fathom {
namespace {

constexpr absl::Duration kLease = absl::Seconds(1);

class FathomdLeaseTest : public FathomdLeaseFixture {
 protected:
  FathomdLeaseTest() : FathomdLeaseFixture(kLease) {}
};

TEST_F(FathomdLeaseTest, ExpiredMembersAreRemovedFencedAndRejoin) {
  WaitForFullCluster("3 members with leases");
  int manager = 0;
  for (int id = 1; id <= kNodes; ++id) {
    if (Counters(id)["coordinator.manager"] == 1) manager = id;
  }
  ASSERT_NE(manager, 0);
  const int member = manager == 3 ? 2 : 3;
  const int witness = 6 - manager - member;
  // The CM sees each member's lease: renewed within the last renewal interval or so.
  auto cm = Counters(manager);
  EXPECT_EQ(cm["lease.period_ms"], 1000u);
  ASSERT_TRUE(cm.contains(absl::StrCat("lease.member.", member, ".age_ms")));
  EXPECT_LT(cm[absl::StrCat("lease.member.", member, ".age_ms")], 1000u);
  EXPECT_GT(cm["lease.grants"], 0u);
  // Renewals go over the lease channel (UDP, a thread of its own), not the node threads' rings.
  EXPECT_GT(cm["lease.channel.requests_answered"], 0u);
  EXPECT_EQ(cm["lease.channel.dropped"], 0u);
  EXPECT_GT(Counters(member)["lease.channel.calls"], 0u);

  // Killed: gone from the configuration within the lease plus a bound, long before its session ends.
  processes_[member - 1]->Signal(SIGKILL);
  ASSERT_TRUE(processes_[member - 1]->Wait(absl::Seconds(10)).ok());
  const absl::Duration killed = WaitFor(witness, "killed member removed", [&](auto& c) {
    return c["coordinator.members"] == 2 && c["node.peers"] == 1;
  });
  std::cerr << "[ info ] killed member removed by the lease and dropped within " << killed << " (lease " << kLease
            << ", ZooKeeper session 10s)\n";
  EXPECT_LT(killed, kLease + absl::Seconds(3));
  EXPECT_GE(Counters(manager)["lease.expiries"], 1u);

  StartNode(member);
  WaitForFullCluster("restarted member back");
  EXPECT_TRUE(Pings(witness, member));

  // Stopped longer than its lease: removed, and the removal sticks while it stays stopped although its
  // ZooKeeper session is alive.
  const uint64_t expiries = Counters(manager)["lease.expiries"];
  processes_[member - 1]->Signal(SIGSTOP);
  const absl::Duration stopped = WaitFor(witness, "stopped member removed", [&](auto& c) {
    return c["coordinator.members"] == 2 && c["node.peers"] == 1;
  });
  std::cerr << "[ info ] stopped member removed by the lease and dropped within " << stopped << " of SIGSTOP\n";
  EXPECT_LT(stopped, kLease + absl::Seconds(3));
  EXPECT_EQ(Counters(manager)["lease.expiries"], expiries + 1);
  absl::SleepFor(2 * kLease);
  auto during = Counters(witness);
  EXPECT_EQ(during["coordinator.members"], 2u) << "re-added while stopped";
  EXPECT_EQ(during["node.peers"], 1u);

  // Resumed: it is no member (its lease lapsed, the configuration left it out), so it joins again.
  const absl::Time resumed = absl::Now();
  processes_[member - 1]->Signal(SIGCONT);
  WaitForFullCluster("resumed member back");
  std::cerr << "[ info ] resumed member joined again within " << absl::Now() - resumed << "\n";
  auto back = Counters(member);
  EXPECT_GE(back["coordinator.rejoins"], 1u);
  EXPECT_GE(back["lease.lapses"], 1u);
  EXPECT_TRUE(Pings(member, witness));
  EXPECT_TRUE(Pings(witness, member));
  EXPECT_TRUE(Pings(member, manager));

  for (int id = 1; id <= kNodes; ++id) {
    processes_[id - 1]->Signal(SIGTERM);
    auto status = processes_[id - 1]->Wait(absl::Seconds(30));
    ASSERT_TRUE(status.ok());
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "node " << id;
  }
}

}  // namespace
}  // namespace fathom
