// The node runtime on an embedded cluster: join, objects read across nodes, RPC from every thread, and
// (on SimFabric) partitions, crashes and drops.
#include <sched.h>

#include <atomic>
#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/fabric/sim/test_seed.h"
#include "platform/node/control/control_client.h"
#include "platform/fabric/ucx/ucx_fabric.h"
#include "server/embedded_cluster.h"

namespace fathom::node {
namespace {

using server::EmbeddedCluster;
using server::EmbeddedClusterOptions;
using server::EmbeddedFabric;

std::string Payload(uint32_t node, int i) { return absl::StrCat("object ", i, " of node ", node); }

// Every node allocates objects; every node reads every node's objects; every thread of every node pings
// every other node at the same time.
void JoinReadAndPing(EmbeddedCluster& cluster) {
  const int n = cluster.size();
  std::vector<std::vector<object::ObjectRef>> refs(n + 1);
  for (int id = 1; id <= n; ++id) {
    EXPECT_EQ(cluster.node(id).connected_peers().size(), size_t(n - 1));
    for (int i = 0; i < 4; ++i) {
      auto ref = cluster.node(id).AllocateObject(Payload(id, i), i % cluster.node(id).threads());
      ASSERT_TRUE(ref.ok()) << ref.status();
      refs[id].push_back(*ref);
    }
  }
  for (int reader = 1; reader <= n; ++reader) {
    for (int owner = 1; owner <= n; ++owner) {
      for (int i = 0; i < 4; ++i) {
        auto bytes = cluster.node(reader).ReadObject(refs[owner][i], i % 2);
        ASSERT_TRUE(bytes.ok()) << "node " << reader << " reading node " << owner << ": " << bytes.status();
        EXPECT_EQ(*bytes, Payload(owner, i));
      }
    }
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> pingers;
  for (int from = 1; from <= n; ++from) {
    for (int to = 1; to <= n; ++to) {
      if (from == to) continue;
      for (int t = 0; t < cluster.node(from).threads(); ++t) {
        pingers.emplace_back([&, from, to, t] {
          auto stats = cluster.node(from).PingPeer(to, t, 200, 64);
          if (!stats.ok() || stats->ok != 200) {
            ++failures;
            ADD_FAILURE() << from << "->" << to << " thread " << t << ": "
                          << (stats.ok() ? stats->first_error.ToString() : stats.status().ToString());
          }
        });
      }
    }
  }
  for (auto& p : pingers) p.join();
  EXPECT_EQ(failures.load(), 0);
  auto counters = cluster.node(1).Counters();
  EXPECT_GT(counters["msg.messages"], 0u);
  EXPECT_EQ(counters["msg.rejected"], 0u);
  EXPECT_EQ(counters["node.unrouted_completions"], 0u);
}

TEST(NodeTest, UcxSharedMemoryClusterJoinsReadsAndPings) {
  auto cluster = EmbeddedCluster::Start({});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  JoinReadAndPing(**cluster);
}

// fathomd --batch_scheduling: each node thread runs under SCHED_BATCH, and the cluster works as before.
TEST(NodeTest, NodeThreadsRunUnderBatchSchedulingWhenAsked) {
  EmbeddedClusterOptions options;
  options.customize = [](NodeOptions& node) { node.batch_scheduling = node.node_id != 3; };
  auto cluster = EmbeddedCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  for (uint32_t id = 1; id <= 3; ++id) {
    for (int t = 0; t < (*cluster)->node(id).threads(); ++t) {
      int policy = -1;
      ASSERT_TRUE((*cluster)->node(id).RunOnThread(t, [&policy](NodeThread&) {
        policy = sched_getscheduler(0);
        return absl::OkStatus();
      }).ok());
      EXPECT_EQ(policy, id != 3 ? SCHED_BATCH : SCHED_OTHER) << "node " << id << " thread " << t;
    }
  }
  JoinReadAndPing(**cluster);
}

TEST(NodeTest, UcxTcpClusterJoinsReadsAndPings) {
  EmbeddedClusterOptions options;
  options.fabric = EmbeddedFabric::kUcxTcp;
  auto cluster = EmbeddedCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  JoinReadAndPing(**cluster);
}

EmbeddedClusterOptions SimOptions(uint64_t seed) {
  EmbeddedClusterOptions options;
  options.fabric = EmbeddedFabric::kSim;
  options.sim.seed = seed;
  options.sim.torn_copies = true;
  options.sim.fabric.operation_timeout = absl::Milliseconds(500);
  return options;
}

TEST(NodeTest, SimClusterJoinsReadsAndPings) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto cluster = EmbeddedCluster::Start(SimOptions(seed));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  JoinReadAndPing(**cluster);
}

// A partition between nodes 1 and 2: their calls fail with a status within a bounded time; each still
// serves node 3.
TEST(NodeTest, SimPartitionFailsOnlyThePartitionedPair) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto cluster = EmbeddedCluster::Start(SimOptions(seed));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EmbeddedCluster& c = **cluster;
  ASSERT_TRUE(c.node(1).Call(2, kPingMessage, "before").ok());
  c.sim()->Partition(1, 2);
  const absl::Time start = absl::Now();
  auto cut = c.node(1).Call(2, kPingMessage, "across", 0, absl::Seconds(5));
  EXPECT_FALSE(cut.ok());
  std::cerr << "[ info ] partitioned call failed after " << absl::Now() - start << ": " << cut.status() << "\n";
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  for (int t = 0; t < 2; ++t) {
    EXPECT_TRUE(c.node(1).Call(3, kPingMessage, "ok", t).ok());
    EXPECT_TRUE(c.node(2).Call(3, kPingMessage, "ok", t).ok());
    EXPECT_TRUE(c.node(3).Call(1, kPingMessage, "ok", t).ok());
  }
}

// A crashed node: the others' calls and reads to it fail with a status; they keep serving each other.
TEST(NodeTest, SimCrashedNodeFailsItsOperationsAndOthersContinue) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto cluster = EmbeddedCluster::Start(SimOptions(seed));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EmbeddedCluster& c = **cluster;
  auto ref = c.node(3).AllocateObject("on node 3");
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(c.node(1).ReadObject(*ref).ok());
  c.sim()->Crash(3);
  const absl::Time start = absl::Now();
  EXPECT_FALSE(c.node(1).Call(3, kPingMessage, "x").ok());
  EXPECT_FALSE(c.node(2).ReadObject(*ref).ok());
  std::cerr << "[ info ] operations to the crashed node failed within " << absl::Now() - start << "\n";
  auto stats = c.node(1).PingPeer(2, 1, 50, 100);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->ok, 50u);
}

// Drops: the msg layer writes a dropped ring write again, so every ping is still answered; nothing hangs.
TEST(NodeTest, SimDropsAreRetransmittedAndEveryPingAnswered) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto cluster = EmbeddedCluster::Start(SimOptions(seed));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EmbeddedCluster& c = **cluster;
  c.sim()->set_drop_probability(0.02);
  const uint64_t dropped_before = c.sim()->stats().dropped;
  int ok = 0;
  for (int from = 1; from <= 3; ++from) {
    for (int to = 1; to <= 3; ++to) {
      if (from == to) continue;
      auto stats = c.node(from).PingPeer(to, 0, 100, 32, absl::Seconds(1));
      ASSERT_TRUE(stats.ok()) << stats.status();
      EXPECT_EQ(stats->ok, 100u) << from << "->" << to << ": " << stats->first_error;
      ok += stats->ok;
    }
  }
  const uint64_t dropped = c.sim()->stats().dropped - dropped_before;
  std::cerr << "[ info ] with drops: " << ok << " pings answered, " << dropped << " operations dropped\n";
  EXPECT_GT(dropped, 0u) << "nothing was dropped: the test lost its teeth";
}

TEST(NodeTest, StatsOverTheControlServiceNeedTheToken) {
  auto cluster = EmbeddedCluster::Start({});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EmbeddedCluster& c = **cluster;
  ASSERT_TRUE(c.node(1).PingPeer(2, 0, 10, 8).ok());
  control::ControlClientOptions options;
  options.target = c.node(1).control_address();
  options.cluster_token = c.token();
  auto client = control::ControlClient::Create(options);
  ASSERT_TRUE(client.ok());
  auto stats = (*client)->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->node_id(), 1u);
  EXPECT_GE(stats->counters().at("msg.calls"), 10u);
  EXPECT_EQ(stats->counters().at("node.peers"), 2u);
  options.cluster_token = std::string(32, 'x');
  auto wrong = control::ControlClient::Create(options);
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ((*wrong)->Stats().status().code(), absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace fathom::node

namespace fathom::node {
namespace {

// Disconnect on both sides, then Join again: fresh rings (new sessions), calls and reads work again.
TEST(NodeReconnectTest, SimDisconnectAndJoinAgain) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto cluster = EmbeddedCluster::Start(SimOptions(seed));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EmbeddedCluster& c = **cluster;
  auto ref = c.node(2).AllocateObject("on node 2");
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(c.node(1).PingPeer(2, 0, 20, 100).ok());
  ASSERT_TRUE(c.node(1).Disconnect(2).ok());
  ASSERT_TRUE(c.node(2).Disconnect(1).ok());
  EXPECT_EQ(c.node(1).Disconnect(2).code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(c.node(1).Call(2, kPingMessage, "gone").ok());
  EXPECT_FALSE(c.node(1).ReadObject(*ref).ok());
  EXPECT_EQ(c.node(1).connected_peers(), std::vector<uint32_t>{3});
  // The removed peer's endpoints (one per thread) failed at once, and are destroyed a while later
  // (NodeThread::RemovePeer: destroying one can unmap a peer's whole memory).
  EXPECT_EQ(c.node(1).Counters()["node.retired_endpoints"], static_cast<uint64_t>(c.node(1).threads()));
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (c.node(1).Counters()["node.retired_endpoints"] > 0 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(c.node(1).Counters()["node.retired_endpoints"], 0u);
  ASSERT_TRUE(c.node(1).JoinPeer({2, c.node(2).control_address()}).ok());
  for (int t = 0; t < 2; ++t) {
    auto stats = c.node(1).PingPeer(2, t, 100, 64);
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->ok, 100u) << stats->first_error;
    auto back = c.node(2).PingPeer(1, t, 100, 64);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->ok, 100u) << back->first_error;
  }
  auto bytes = c.node(1).ReadObject(*ref);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, "on node 2");
  EXPECT_EQ(c.node(2).Counters()["msg.rejected"], 0u);
}

// The peers connected to node `id`'s thread `t` that it has not heard CONFIG-APPLIED of `epoch` from.
std::vector<uint32_t> PeersBehind(EmbeddedCluster& cluster, uint32_t id, int t, uint64_t epoch) {
  std::vector<uint32_t> behind;
  absl::Status ran = cluster.node(id).RunOnThread(t, [&](NodeThread& thread) {
    behind = thread.PeersBehind(epoch);
    return absl::OkStatus();
  });
  EXPECT_TRUE(ran.ok()) << ran;
  return behind;
}

// Every thread tells its peers the epoch of the map it works from (config_applied.h) once it takes a new
// map, and again on a new connection; what a peer told goes with its connection. A node that raised its
// epoch floor refuses joins, both ways, with a peer working from an older map.
TEST(NodeReconnectTest, SimThreadsAnnounceTheMapTheyWorkFromAndJoinsHonourTheFloor) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto cluster = EmbeddedCluster::Start(SimOptions(seed));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EmbeddedCluster& c = **cluster;
  const std::vector<uint32_t> members = {1, 2, 3};
  auto behind_on_every_thread = [&](uint32_t id, uint64_t epoch, std::vector<uint32_t> expected) {
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (true) {
      bool all = true;
      for (int t = 0; t < c.node(id).threads(); ++t) all = all && PeersBehind(c, id, t, epoch) == expected;
      if (all || absl::Now() >= give_up) return all;
      absl::SleepFor(absl::Milliseconds(2));
    }
  };
  const uint64_t epoch = c.node(1).region_directory().Current()->epoch() + 5;
  EXPECT_TRUE(behind_on_every_thread(1, epoch, {2, 3}));
  c.node(2).region_directory().Set(memory::RegionMap::ByOwner(epoch, members, 1));
  EXPECT_TRUE(behind_on_every_thread(1, epoch, {3})) << "node 2 did not announce its new map to node 1";
  EXPECT_TRUE(behind_on_every_thread(3, epoch, {1})) << "node 2 did not announce its new map to node 3";
  // A new connection starts with nothing heard; the peer announces its map on it again.
  ASSERT_TRUE(c.node(1).Disconnect(2).ok());
  EXPECT_EQ(PeersBehind(c, 1, 0, epoch), (std::vector<uint32_t>{3}));  // node 2 is not connected
  ASSERT_TRUE(c.node(1).JoinPeer({2, c.node(2).control_address()}).ok());
  EXPECT_TRUE(behind_on_every_thread(1, epoch, {3})) << "node 2 did not announce its map on the new connection";

  // Node 1 serves regions promoted in `epoch`: node 3, still behind, cannot connect, whoever joins whom.
  ASSERT_TRUE(c.node(1).RaiseEpochFloor(epoch));
  ASSERT_TRUE(c.node(1).Disconnect(3).ok());
  ASSERT_TRUE(c.node(3).Disconnect(1).ok());
  absl::Status refused = c.node(3).JoinPeer({1, c.node(1).control_address()});
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_NE(refused.message().find("apply it first"), std::string::npos) << refused;
  refused = c.node(1).JoinPeer({3, c.node(3).control_address()});
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_EQ(c.node(3).connected_peers(), std::vector<uint32_t>{2});
  c.node(3).region_directory().Set(memory::RegionMap::ByOwner(epoch, members, 1));
  ASSERT_TRUE(c.node(3).JoinPeer({1, c.node(1).control_address()}).ok());
  EXPECT_TRUE(behind_on_every_thread(1, epoch, {}));
  EXPECT_EQ(c.node(1).Counters()["msg.rejected"], 0u);
}

// One side drops the connection and joins again: the other sees new ring sessions and resets its side too.
TEST(NodeReconnectTest, SimOneSidedDisconnectAndJoinResetsBothSides) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto cluster = EmbeddedCluster::Start(SimOptions(seed));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EmbeddedCluster& c = **cluster;
  ASSERT_TRUE(c.node(1).PingPeer(2, 0, 20, 100).ok());
  ASSERT_TRUE(c.node(1).Disconnect(2).ok());  // node 2 still holds its side
  ASSERT_TRUE(c.node(1).JoinPeer({2, c.node(2).control_address()}).ok());
  for (int t = 0; t < 2; ++t) {
    auto there = c.node(1).PingPeer(2, t, 100, 64);
    ASSERT_TRUE(there.ok());
    EXPECT_EQ(there->ok, 100u) << there->first_error;
    auto back = c.node(2).PingPeer(1, t, 100, 64);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->ok, 100u) << back->first_error;
  }
  EXPECT_EQ(c.node(2).Counters()["msg.rejected"], 0u);
  // A duplicate Join (same incarnation, same rings) changes nothing.
  ASSERT_TRUE(c.node(2).JoinPeer({1, c.node(1).control_address()}).ok());
  auto again = c.node(2).PingPeer(1, 0, 10, 8);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ok, 10u);
}

// The side that kept its connection joins again (a republish) after the other dropped its side: the
// other side connects to the rings this join published, so this side must not answer with rings of a new
// session. It refuses the join instead (Unavailable) and the next one, from a clean slate, works both ways.
TEST(NodeReconnectTest, SimAJoinThatReplacedItsOwnRingsIsRefusedAndTheNextWorks) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto cluster = EmbeddedCluster::Start(SimOptions(seed));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EmbeddedCluster& c = **cluster;
  ASSERT_TRUE(c.node(1).PingPeer(2, 0, 20, 100).ok());
  ASSERT_TRUE(c.node(1).Disconnect(2).ok());  // node 2 still holds its side
  absl::Status republished = c.node(2).Republish({1, c.node(1).control_address()});
  EXPECT_TRUE(absl::IsUnavailable(republished)) << republished;
  ASSERT_TRUE(c.node(2).JoinPeer({1, c.node(1).control_address()}).ok());
  for (int t = 0; t < 2; ++t) {
    auto there = c.node(2).PingPeer(1, t, 100, 64);
    ASSERT_TRUE(there.ok());
    EXPECT_EQ(there->ok, 100u) << there->first_error;
    auto back = c.node(1).PingPeer(2, t, 100, 64);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->ok, 100u) << back->first_error;
  }
  EXPECT_EQ(c.node(1).Counters()["msg.rejected"], 0u);
  EXPECT_EQ(c.node(2).Counters()["msg.rejected"], 0u);
}

// A connection that carried a few records and was replaced: its records at the start of the slot's rings
// must not outlive it. A ring the new connection keeps silent would otherwise look, for the receiver's
// whole corrupt_after (5 s), like its first record being written, and then be declared bad.
TEST(NodeReconnectTest, SimARingTheNewConnectionLeavesSilentStaysHealthy) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto cluster = EmbeddedCluster::Start(SimOptions(seed));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EmbeddedCluster& c = **cluster;
  auto pinged = c.node(2).PingPeer(1, 1, 1, 8);  // one record each way on the rings of thread 1
  ASSERT_TRUE(pinged.ok() && pinged->ok == 1u);
  ASSERT_TRUE(c.node(1).Disconnect(2).ok());
  ASSERT_TRUE(c.node(2).Disconnect(1).ok());
  ASSERT_TRUE(c.node(2).JoinPeer({1, c.node(1).control_address()}).ok());
  // Longer than corrupt_after, with nothing sent on thread 1.
  absl::SleepFor(absl::Seconds(6));
  EXPECT_TRUE(c.node(1).failed_peers().empty());
  EXPECT_TRUE(c.node(2).failed_peers().empty());
  EXPECT_EQ(c.node(1).Counters()["msg.peer_failures"], 0u);
  EXPECT_EQ(c.node(2).Counters()["msg.peer_failures"], 0u);
  auto again = c.node(2).PingPeer(1, 1, 10, 8);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ok, 10u) << again->first_error;
}

// Membership from LocalCoordinator on SimFabric: nodes connect as the configuration lists them; a member
// that leaves is dropped by everyone; when it joins again, everyone reconnects.
TEST(NodeMembershipTest, SimNodesFollowTheLocalCoordinatorsConfiguration) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  EmbeddedClusterOptions options = SimOptions(seed);
  options.coordinated = true;
  auto cluster = EmbeddedCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EmbeddedCluster& c = **cluster;
  auto wait_for_peers = [&](uint32_t id, size_t peers) {
    for (int i = 0; i < 500 && c.node(id).connected_peers().size() != peers; ++i) absl::SleepFor(absl::Milliseconds(10));
    return c.node(id).connected_peers().size() == peers;
  };
  for (uint32_t id = 1; id <= 3; ++id) ASSERT_TRUE(wait_for_peers(id, 2)) << "node " << id;
  JoinReadAndPing(c);

  ASSERT_TRUE(c.coordinator(3)->Leave().ok());
  ASSERT_TRUE(wait_for_peers(1, 1));
  ASSERT_TRUE(wait_for_peers(2, 1));
  ASSERT_TRUE(wait_for_peers(3, 0));
  EXPECT_FALSE(c.node(1).Call(3, kPingMessage, "not a member").ok());
  EXPECT_TRUE(c.node(1).Call(2, kPingMessage, "member").ok());

  // It joins again as it first did: with its regions and the cluster's f (the placement keeps its regions).
  coordinator::MemberInfo again = MemberInfoFor(c.node(3), 16 << 20, coordinator::FABRIC_KIND_SIM);
  auto config = c.coordinator(1)->GetConfiguration();
  ASSERT_TRUE(config.ok()) << config.status();
  again.set_backups_per_region(config->backups_per_region());
  absl::Status joined = c.coordinator(3)->Join(again);
  ASSERT_TRUE(joined.ok()) << joined;
  for (uint32_t id = 1; id <= 3; ++id) ASSERT_TRUE(wait_for_peers(id, 2)) << "node " << id;
  for (uint32_t from = 1; from <= 3; ++from) {
    for (uint32_t to = 1; to <= 3; ++to) {
      if (from == to) continue;
      auto stats = c.node(from).PingPeer(to, 1, 20, 32);
      ASSERT_TRUE(stats.ok());
      EXPECT_EQ(stats->ok, 20u) << from << "->" << to << ": " << stats->first_error;
    }
  }
}

// A node restarts (same id, new incarnation) and joins again: its peers replace the old connection.
TEST(NodeReconnectTest, RestartedNodeRejoinsOverUcx) {
  auto start = [](uint32_t id, const std::string& token) -> absl::StatusOr<std::unique_ptr<Node>> {
    fabric::UcxOptions ucx;
    ucx.transports = "sm";
    auto fabric = fabric::CreateUcxFabric(ucx);
    if (!fabric.ok()) return fabric.status();
    NodeOptions options;
    options.node_id = id;
    options.cluster_token = token;
    options.memory_bytes = 8 << 20;
    options.region_bytes = 8 << 20;
    return Node::Start(options, std::move(*fabric));
  };
  const std::string token = "restart-test-token-0123456789";
  auto one = start(1, token);
  auto two = start(2, token);
  ASSERT_TRUE(one.ok() && two.ok());
  ASSERT_TRUE((*one)->JoinPeer({2, (*two)->control_address()}).ok());
  ASSERT_TRUE((*one)->PingPeer(2, 0, 10, 8).ok());
  const uint64_t old_incarnation = (*two)->incarnation();
  (*two)->Stop();
  two->reset();
  auto again = start(2, token);
  ASSERT_TRUE(again.ok());
  EXPECT_NE((*again)->incarnation(), old_incarnation);
  ASSERT_TRUE((*again)->JoinPeer({1, (*one)->control_address()}).ok());
  for (int t = 0; t < 2; ++t) {
    auto stats = (*one)->PingPeer(2, t, 50, 64);
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->ok, 50u) << stats->first_error;
  }
  auto ref = (*again)->AllocateObject("after restart");
  ASSERT_TRUE(ref.ok());
  auto bytes = (*one)->ReadObject(*ref);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, "after restart");
}

}  // namespace
}  // namespace fathom::node
