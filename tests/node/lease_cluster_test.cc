// Leases on an embedded cluster: SimFabric, LocalCoordinator, and lease time on a SimulatedClock that
// only the test advances (each round: +period/4, then a Tick of each running node, CM first). Every lease
// decision is then fixed by the seed and the schedule; the test waits (in real time) only for the
// followers to apply a configuration before it goes on.
//
// Asserted: members hold leases and nothing expires while everyone renews; a member that stops (its
// follower and lease ticks paused, as by SIGSTOP) is removed exactly one period after its last renewal;
// the others drop it, and while it is out its messages are not handled (fenced) although it still holds
// its side of the connections; resumed, it joins again by itself and talks to everyone. Members whose
// leases lapsed because the CM went silent keep their connections to each other. A CM that was
// stalled itself blames nobody. A member that failed after renewing has its regions promoted, and so has
// one that never renewed but that the CM's node had connected to.
#include <algorithm>
#include <array>
#include <atomic>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/fabric/sim/test_seed.h"
#include "server/embedded_cluster.h"
#include "coordinator/lease_agent.h"

namespace fathom::node {
namespace {

using server::EmbeddedCluster;
using server::EmbeddedClusterOptions;
using server::EmbeddedFabric;
using coordinator::LeaseCounters;
using coordinator::LeaseOptions;

constexpr msg::MessageType kProbeMessage = 98;  // test only: counts what each node handles, per sender
constexpr absl::Duration kPeriod = absl::Seconds(1);
constexpr absl::Duration kRound = absl::Milliseconds(250);  // period / renewals_per_period

class LeaseClusterTest : public ::testing::Test {
 protected:
  void Start(uint64_t seed) {
    EmbeddedClusterOptions options;
    options.nodes = 3;
    options.threads = 2;
    options.fabric = EmbeddedFabric::kSim;
    options.sim.seed = seed;
    options.memory_bytes = 8 << 20;
    options.coordinated = true;
    options.lease_period = kPeriod;
    options.lease_clock = &clock_;
    options.customize = [this](NodeOptions& node) {
      const uint32_t id = node.node_id;
      node.register_handlers = [this, id](msg::Messenger& messenger, int) {
        messenger
            .Register(kProbeMessage,
                      [this, id](const msg::Message& m, std::string* reply) {
                        ++handled_[id][m.peer];
                        if (reply != nullptr) reply->assign("ok");
                        return absl::OkStatus();
                      })
            .IgnoreError();
      };
    };
    auto cluster = EmbeddedCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  // Advances lease time by a round and ticks the running nodes, the CM (node 1) first.
  void Round(std::initializer_list<uint32_t> ids) {
    clock_.Advance(kRound);
    for (uint32_t id : ids) cluster_->lease(id)->Tick();
  }

  bool Eventually(const std::function<bool()>& done) {
    for (int i = 0; i < 1000; ++i) {
      if (done()) return true;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return done();
  }

  std::vector<uint32_t> Peers(uint32_t id) { return cluster_->node(id).connected_peers(); }
  bool Listed(uint32_t id) {
    return coordinator::FindMember(cluster_->coordination()->configuration(), id) != nullptr;
  }
  // A probe that must be answered gets a generous deadline (a sanitizer build on a loaded machine answered
  // later than 300 ms); one that must not (fenced) waits `timeout`, short, since nothing will come.
  absl::Status Probe(uint32_t from, uint32_t to, absl::Duration timeout = absl::Seconds(10)) {
    return cluster_->node(from).Call(to, kProbeMessage, "probe", 0, timeout).status();
  }

  std::string Describe(uint32_t id) {
    const LeaseCounters l = cluster_->lease(id)->counters();
    return absl::StrCat(": requests ", l.requests, ", grants received ", l.grants_received, ", refusals received ",
                        l.refusals_received, ", failures ", l.request_failures, "; CM grants ",
                        cluster_->lease(1)->counters().grants, ", refusals ", cluster_->lease(1)->counters().refusals);
  }

  // Partitions the CM (node 1) from nodes 2 and 3, then ticks `ids` a round at a time (at most 12) until
  // both members suspect it.
  void CutTheCmOffUntilBothMembersSuspect(std::initializer_list<uint32_t> ids) {
    cluster_->sim()->Partition(1, 2);
    cluster_->sim()->Partition(1, 3);
    for (int i = 0; i < 12 && (cluster_->lease(2)->counters().suspicions == 0 ||
                               cluster_->lease(3)->counters().suspicions == 0);
         ++i) {
      Round(ids);
    }
  }

  // Until every member holds a lease and is connected to every other.
  void Settle() {
    // Every node's lease agent must have the configuration of all three before the round (a member not
    // listed in the one it has asks for nothing), and the members must reach the CM.
    ASSERT_TRUE(Eventually([&] {
      const coordinator::Configuration config = cluster_->coordination()->configuration();
      if (coordinator::DataMemberIds(config).size() != 3) return false;
      for (uint32_t id = 1; id <= 3; ++id) {
        if (cluster_->lease(id)->configuration_epoch() < config.epoch()) return false;
      }
      for (uint32_t id = 2; id <= 3; ++id) {
        const std::vector<uint32_t> peers = Peers(id);
        if (std::find(peers.begin(), peers.end(), 1u) == peers.end()) return false;
      }
      return true;
    })) << "the configuration of three members did not reach every node, or a member is not connected to the CM";
    // Two rounds: the CM's own lease needs the members to confirm a grant it made (lease_agent.h), and in
    // a round it ticks before they ask.
    Round({1, 2, 3});
    Round({1, 2, 3});
    for (uint32_t id = 1; id <= 3; ++id) ASSERT_TRUE(cluster_->lease(id)->HoldsLease()) << "node " << id << Describe(id);
    for (uint32_t id = 1; id <= 3; ++id) {
      ASSERT_TRUE(Eventually([&] { return Peers(id).size() == 2; })) << "node " << id;
    }
  }

  SimulatedClock clock_{absl::UnixEpoch() + absl::Hours(1)};
  std::array<std::array<std::atomic<int>, 4>, 4> handled_{};
  std::unique_ptr<EmbeddedCluster> cluster_;
};

TEST_F(LeaseClusterTest, StoppedMemberIsRemovedFencedAndRejoins) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  Start(seed);
  EmbeddedCluster& c = *cluster_;
  ASSERT_NO_FATAL_FAILURE(Settle());
  ASSERT_TRUE(c.coordinator(1)->is_manager());

  // Renewing: 5 periods, no expiry, no lapse.
  for (int i = 0; i < 20; ++i) Round({1, 2, 3});
  for (uint32_t id = 1; id <= 3; ++id) {
    EXPECT_TRUE(c.lease(id)->HoldsLease());
    EXPECT_EQ(c.lease(id)->counters().lapses, 0u);
  }
  EXPECT_EQ(c.lease(1)->counters().expiries, 0u);
  EXPECT_GE(c.lease(1)->counters().grants, 40u);
  ASSERT_TRUE(Probe(3, 2).ok());
  EXPECT_EQ(handled_[2][3].load(), 1);

  // Node 3 stops: no ticks, no configuration applied. Its last grant was at the last round.
  c.PauseMembership(3);
  const coordinator::Configuration before = c.coordination()->configuration();
  const uint64_t epoch = before.epoch();
  for (int i = 0; i < 3; ++i) {
    Round({1, 2});
    EXPECT_TRUE(Listed(3)) << "removed after only " << (i + 1) << " rounds";
  }
  Round({1, 2});  // a full period since the last renewal
  EXPECT_FALSE(Listed(3));
  EXPECT_EQ(c.coordination()->configuration().epoch(), epoch + 1);
  EXPECT_EQ(c.lease(1)->counters().expiries, 1u);
  // The CM saw node 3 renew: it failed, and its regions went to their backups in the same change.
  const coordinator::Configuration after = c.coordination()->configuration();
  for (const coordinator::RegionPlacement& r : after.regions()) {
    const coordinator::RegionPlacement* was = coordinator::FindRegion(before, r.region_id());
    ASSERT_NE(was, nullptr);
    if (was->primary() == 3) {
      ASSERT_GT(was->backups_size(), 0) << r.region_id();
      EXPECT_EQ(r.primary(), was->backups(0)) << r.region_id();
    }
    EXPECT_NE(r.primary(), 3u);
    for (uint32_t b : r.backups()) EXPECT_NE(b, 3u) << r.region_id();
  }
  EXPECT_FALSE(c.lease(3)->HoldsLease());  // its own lease ran out first (it ran from the request)
  ASSERT_TRUE(Eventually([&] { return Peers(1).size() == 1 && Peers(2).size() == 1; }));
  EXPECT_EQ(Peers(3).size(), 2u);  // the stopped node still holds its side

  // Fenced: what node 3 sends now is never handled, by a member or by the CM.
  EXPECT_FALSE(Probe(3, 2, absl::Milliseconds(300)).ok());
  EXPECT_FALSE(Probe(3, 1, absl::Milliseconds(300)).ok());
  EXPECT_EQ(handled_[2][3].load(), 1);
  EXPECT_EQ(handled_[1][3].load(), 0);
  for (int i = 0; i < 8; ++i) Round({1, 2});  // the removal sticks
  EXPECT_FALSE(Listed(3));

  // Resumed: it finds itself removed, joins again, gets a lease and reconnects to everyone.
  ASSERT_TRUE(c.ResumeMembership(3).ok());
  ASSERT_TRUE(Eventually([&] { return Listed(3) && c.follower(3)->rejoins() == 1; }));
  ASSERT_NO_FATAL_FAILURE(Settle());
  EXPECT_TRUE(Probe(3, 2).ok());
  EXPECT_TRUE(Probe(3, 1).ok());
  EXPECT_TRUE(Probe(2, 3).ok());
  EXPECT_EQ(handled_[2][3].load(), 2);
  for (int i = 0; i < 8; ++i) Round({1, 2, 3});
  EXPECT_TRUE(Listed(3));
  EXPECT_EQ(c.lease(1)->counters().expiries, 1u);
}

// A member that never renewed with this CM, but that the CM's node connected to, failed while the cluster
// ran: its regions go to their backups when its lease runs out. This is a member that died together with
// the old CM (the successor never held its lease; issue 58, path 3: before, its regions stayed on it and
// the cluster stalled for good). A member no process of the cluster ever connected to (a whole-cluster
// restart) moves nothing: tests/logging:fathomd_zk_restart_test.
TEST_F(LeaseClusterTest, AMemberThatNeverRenewedButWasConnectedHasItsRegionsPromoted) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  Start(seed);
  EmbeddedCluster& c = *cluster_;
  // Until node 1's follower joined node 3 (a connection node 3 made first is not node 1's seeing it).
  ASSERT_TRUE(Eventually([&] {
    const coordinator::Configuration config = c.coordination()->configuration();
    const coordinator::MemberInfo* three = coordinator::FindMember(config, 3);
    return coordinator::DataMemberIds(config).size() == 3 && c.lease(1)->configuration_epoch() >= config.epoch() &&
           three != nullptr && c.lease(1)->SawAlive(3, three->incarnation());
  }));
  c.PauseMembership(3);  // before it ever asked for a lease
  const coordinator::Configuration before = c.coordination()->configuration();
  for (int i = 0; i < 5; ++i) Round({1, 2});
  EXPECT_FALSE(Listed(3));
  EXPECT_EQ(c.lease(1)->counters().expiries, 1u);
  const coordinator::Configuration after = c.coordination()->configuration();
  int held = 0;
  for (const coordinator::RegionPlacement& r : before.regions()) {
    const bool on_3 = r.primary() == 3 || std::find(r.backups().begin(), r.backups().end(), 3u) != r.backups().end();
    if (!on_3) continue;
    ++held;
    const coordinator::RegionPlacement* now = coordinator::FindRegion(after, r.region_id());
    ASSERT_NE(now, nullptr) << "region " << r.region_id() << " lost";
    EXPECT_NE(now->primary(), 3u) << "region " << r.region_id() << " still has node 3 as primary";
    EXPECT_EQ(std::find(now->backups().begin(), now->backups().end(), 3u), now->backups().end())
        << "region " << r.region_id() << " still lists node 3 as a backup";
  }
  EXPECT_GT(held, 0) << "node 3 held no replica: the test shows nothing";
}

// A CM that stops answering (cut off from both members) is suspected by each member once its lease
// lapsed for want of answers (ZooKeeper then deposes it: zookeeper_coordinator_test); members that hear
// from it suspect nothing.
TEST_F(LeaseClusterTest, MembersSuspectACmThatStoppedAnswering) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  Start(seed);
  ASSERT_NO_FATAL_FAILURE(Settle());
  for (int i = 0; i < 8; ++i) Round({1, 2, 3});
  for (uint32_t id = 2; id <= 3; ++id) EXPECT_EQ(cluster_->lease(id)->counters().suspicions, 0u) << "node " << id;
  const absl::Time cut = clock_.Now();
  CutTheCmOffUntilBothMembersSuspect({2, 3});
  // They vote after a quarter period without an answer (two requests), while their leases still run: a
  // successor can then grant the next one before they lapse, so a CM failure stalls no transaction that
  // needs no reconfiguration. (The last grants' requests left a round before the cut; a round is a
  // quarter period.)
  EXPECT_EQ(clock_.Now() - cut, 2 * kRound);
  for (uint32_t id = 2; id <= 3; ++id) {
    EXPECT_TRUE(cluster_->lease(id)->HoldsLease()) << "node " << id << " voted only once its lease lapsed";
    EXPECT_EQ(cluster_->lease(id)->counters().suspicions, 1u) << "node " << id << Describe(id);
  }
  // No successor here (LocalCoordinator holds no election): the leases lapse two rounds later.
  Round({2, 3});
  for (uint32_t id = 2; id <= 3; ++id) EXPECT_TRUE(cluster_->lease(id)->HoldsLease()) << "node " << id;
  Round({2, 3});
  for (uint32_t id = 2; id <= 3; ++id) EXPECT_FALSE(cluster_->lease(id)->HoldsLease()) << "node " << id;
  // Lapsed, they keep their connection to each other (a dead CM lapses every lease at once, and making
  // the connections again held every transaction up for ~0.5 s after the successor's grants).
  for (uint32_t id = 2; id <= 3; ++id) {
    ASSERT_TRUE(Eventually([&] { return cluster_->follower(id)->passes_without_lease() > 0; })) << "node " << id;
  }
  for (uint32_t id = 2; id <= 3; ++id) {
    const uint32_t other = 5 - id;
    const std::vector<uint32_t> peers = Peers(id);
    EXPECT_NE(std::find(peers.begin(), peers.end(), other), peers.end()) << "node " << id << " dropped node " << other;
    EXPECT_TRUE(Probe(id, other).ok()) << "node " << id << " to node " << other;
  }
}

// FaRM's rule for partitions: a CM cut off from both other data members hears no majority. It removes
// no one (a minority never reconfigures; the majority deposes it instead) and its own lease lapses, so
// its reads and commits fail instead of being stale.
TEST_F(LeaseClusterTest, ACmCutOffFromTheMajorityLapsesAndRemovesNoOne) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  Start(seed);
  ASSERT_NO_FATAL_FAILURE(Settle());
  for (int i = 0; i < 8; ++i) Round({1, 2, 3});
  ASSERT_TRUE(cluster_->lease(1)->HoldsLease());
  const uint64_t epoch = cluster_->coordination()->configuration().epoch();
  cluster_->sim()->Partition(1, 2);
  cluster_->sim()->Partition(1, 3);
  for (int i = 0; i < 16; ++i) Round({1});  // four periods: both members' leases expire at the CM
  EXPECT_EQ(cluster_->lease(1)->counters().expiries, 0u);
  EXPECT_GT(cluster_->lease(1)->counters().minority_ticks, 0u);
  EXPECT_EQ(cluster_->coordination()->configuration().epoch(), epoch);
  EXPECT_FALSE(cluster_->lease(1)->HoldsLease());
  EXPECT_TRUE(cluster_->lease(1)->LeaseLapsed());
}

// The CM's own lease rests on grants a majority confirmed they received, not on hearing them: members
// that voted it out confirm none of its grants for vote_silence, so it stays lapsed although it hears
// them again and grants them leases (its successor relies on that: LeaseAgent::ShortenDeposedManager).
TEST_F(LeaseClusterTest, ACmsOwnLeaseNeedsAMajorityToConfirmItsGrants) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  Start(seed);
  ASSERT_NO_FATAL_FAILURE(Settle());
  for (int i = 0; i < 8; ++i) Round({1, 2, 3});
  ASSERT_TRUE(cluster_->lease(1)->HoldsLease());
  const absl::Time cut = clock_.Now();
  CutTheCmOffUntilBothMembersSuspect({1, 2, 3});
  ASSERT_EQ(cluster_->lease(2)->counters().suspicions, 1u) << Describe(2);
  ASSERT_EQ(cluster_->lease(3)->counters().suspicions, 1u) << Describe(3);
  cluster_->sim()->Heal(1, 2);
  cluster_->sim()->Heal(1, 3);
  // The followers mend the members' connections to the CM in real time; lease time stands still meanwhile.
  for (uint32_t id = 2; id <= 3; ++id) {
    ASSERT_TRUE(Eventually([&] {
      const std::vector<uint32_t> peers = Peers(id);
      return std::find(peers.begin(), peers.end(), 1u) != peers.end() && cluster_->node(id).failed_peers().empty();
    })) << "node " << id << " is not connected to the CM again";
  }
  // Both members are granted leases again.
  for (int i = 0; i < 4 && !(cluster_->lease(2)->HoldsLease() && cluster_->lease(3)->HoldsLease()); ++i) {
    Round({1, 2, 3});
  }
  ASSERT_LT(clock_.Now() - cut, absl::Seconds(5)) << "the test outlasted the members' silence (6 s)";
  ASSERT_TRUE(cluster_->lease(2)->HoldsLease()) << Describe(2);
  ASSERT_TRUE(cluster_->lease(3)->HoldsLease()) << Describe(3);
  Round({1, 2, 3});
  EXPECT_FALSE(cluster_->lease(1)->HoldsLease()) << "the CM holds a lease no member confirmed";
  // Once the votes' silence is over (6 s), their confirmations count again.
  while (clock_.Now() - cut < absl::Seconds(7)) Round({1, 2, 3});
  Round({1, 2, 3});
  Round({1, 2, 3});
  EXPECT_TRUE(cluster_->lease(1)->HoldsLease());
}

TEST_F(LeaseClusterTest, StalledManagerBlamesNoOne) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  Start(seed);
  ASSERT_NO_FATAL_FAILURE(Settle());
  const uint64_t epoch = cluster_->coordination()->configuration().epoch();
  // Everything stalls for 3 periods (the whole machine was starved); then the CM ticks first.
  clock_.Advance(3 * kPeriod);
  Round({1, 2, 3});
  EXPECT_EQ(cluster_->lease(1)->counters().expiries, 0u);
  EXPECT_EQ(cluster_->lease(1)->counters().manager_stalls, 1u);
  EXPECT_EQ(cluster_->coordination()->configuration().epoch(), epoch);
  for (uint32_t id = 2; id <= 3; ++id) {
    EXPECT_TRUE(cluster_->lease(id)->HoldsLease()) << "node " << id;  // renewed at once
    EXPECT_EQ(cluster_->lease(id)->counters().lapses, 0u);            // lapsed and renewed within one tick
  }
}

}  // namespace
}  // namespace fathom::node
