// Messenger (RPC over rings) on SimFabric: request/reply, one-way, batching, timeouts at the deadline,
// failures, unknown types, handler errors, a bounds-checking handler, replies waiting for room, and a
// many-node stress run under torn copies and drops.
#include <cstring>
#include <optional>
#include <map>
#include <memory>
#include <random>
#include <atomic>
#include <thread>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "platform/base/clock.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/fabric/sim/test_seed.h"
#include "platform/msg/check_range.h"
#include "platform/msg/messenger.h"
#include "platform/msg/rpc_envelope.h"
#include "platform/msg/test_util.h"

namespace fathom::msg {
namespace {

using fabric::sim::SeedTrace;
using fabric::sim::SimOptions;
using fabric::sim::TestSeed;
using testing::Pattern;
using testing::CountingEndpoint;
using testing::SimMsgCluster;

constexpr MessageType kEcho = 1;
constexpr MessageType kNote = 2;
constexpr MessageType kFail = 3;
constexpr MessageType kWrite = 4;
constexpr MessageType kBig = 5;

SimMsgCluster::Options ClusterOptions(uint64_t seed) {
  SimMsgCluster::Options options;
  options.sim.seed = seed;
  options.sim.torn_copies = true;
  options.sim.max_latency = absl::Microseconds(10);
  options.sim.fabric.operation_timeout = absl::Milliseconds(100);
  options.messenger.receiver.corrupt_after = absl::Milliseconds(200);
  return options;
}

absl::Status Echo(const Message& m, std::string* reply) {
  if (reply != nullptr) reply->assign(m.payload);
  return absl::OkStatus();
}

// A pump that also runs the sim: the single-threaded test drives every node.
auto Pump(SimMsgCluster& cluster) {
  return [&cluster] {
    if (cluster.PumpOnce() == 0) cluster.network.Advance(absl::Microseconds(50));
  };
}

TEST(RpcTest, RequestReplyBothWays) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  ASSERT_OK(cluster.messenger(1).Register(kEcho, Echo));
  ASSERT_OK(cluster.messenger(2).Register(kEcho, Echo));
  for (int i = 0; i < 50; ++i) {
    const NodeId from = 1 + i % 2, to = 3 - from;
    absl::StatusOr<std::string> reply = CallAndWait(cluster.messenger(from), to, kEcho, Pattern(i, i * 7),
                                                    absl::Seconds(1), Pump(cluster), cluster.clock());
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(*reply, Pattern(i, i * 7));
  }
  EXPECT_EQ(cluster.messenger(1).pending_calls(), 0u);
  EXPECT_EQ(cluster.messenger(2).counters().messages, 50u);  // 25 requests + 25 replies
  EXPECT_EQ(cluster.messenger(1).counters().rejected_total(), 0u);
}

TEST(RpcTest, OneWayMessagesArriveInOrder) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  std::vector<std::string> got;
  ASSERT_OK(cluster.messenger(2).Register(kNote, [&](const Message& m, std::string* reply) {
    EXPECT_EQ(reply, nullptr);
    EXPECT_EQ(m.peer, 1u);
    got.emplace_back(m.payload);
    return absl::OkStatus();
  }));
  int sent = 0;
  while (sent < 2000) {
    absl::Status s = cluster.messenger(1).Send(2, kNote, Pattern(sent, sent % 300));
    if (s.ok()) {
      ++sent;
      continue;
    }
    ASSERT_TRUE(absl::IsResourceExhausted(s)) << s;
    Pump(cluster)();
  }
  ASSERT_TRUE(cluster.PumpUntil([&] { return got.size() == 2000; }));
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(got[i], Pattern(i, i % 300)) << i;
  EXPECT_EQ(cluster.messenger(1).stats().one_way_sent, 2000u);
}

TEST(RpcTest, RingOccupancyCountsWhatThePeerHasNotConsumed) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  int got = 0;
  ASSERT_OK(cluster.messenger(2).Register(kNote, [&](const Message&, std::string*) {
    ++got;
    return absl::OkStatus();
  }));
  const Messenger::RingOccupancy empty = cluster.messenger(1).send_ring_occupancy();
  ASSERT_GT(empty.capacity_bytes, 0u);
  EXPECT_EQ(empty.used_bytes, 0u);
  // Node 2 does not poll: its ring fills up.
  int sent = 0;
  while (cluster.messenger(1).Send(2, kNote, Pattern(sent, 200)).ok()) ++sent;
  const Messenger::RingOccupancy full = cluster.messenger(1).send_ring_occupancy();
  EXPECT_EQ(full.capacity_bytes, empty.capacity_bytes);
  EXPECT_GE(full.used_bytes, empty.capacity_bytes / 2) << sent << " messages sent";
  EXPECT_LE(full.used_bytes, empty.capacity_bytes);
  // Once node 2 consumed them and its credit reached node 1, most of the ring counts as free again.
  ASSERT_TRUE(cluster.PumpUntil([&] {
    cluster.messenger(1).sender(2)->ReadCredit();
    return got == sent && cluster.messenger(1).send_ring_occupancy().used_bytes < empty.capacity_bytes / 2;
  }));
}

TEST(RpcTest, QueuedCallsGoOutInOneWrite) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  ASSERT_OK(cluster.messenger(2).Register(kEcho, Echo));
  int replies = 0;
  const uint64_t writes_before = cluster.endpoint(1, 2).writes();
  for (int i = 0; i < 30; ++i) {
    ASSERT_OK(cluster.messenger(1).Call(2, kEcho, Pattern(i, 40), absl::Seconds(1),
                                        [&, i](absl::StatusOr<std::string_view> r) {
                                          ASSERT_TRUE(r.ok()) << r.status();
                                          EXPECT_EQ(*r, Pattern(i, 40));
                                          ++replies;
                                        }));
  }
  ASSERT_OK(cluster.messenger(1).Send(2, kEcho, "and a one-way"));
  EXPECT_EQ(cluster.endpoint(1, 2).writes(), writes_before);
  ASSERT_OK(cluster.messenger(1).Flush());
  EXPECT_EQ(cluster.endpoint(1, 2).writes(), writes_before + 1) << "31 queued messages, one write";
  ASSERT_TRUE(cluster.PumpUntil([&] { return replies == 30; }));
  // Node 2 answered all 30 from one Poll or a few: its replies were batched as well.
  EXPECT_LT(cluster.endpoint(2, 1).writes(), 10u);
}

TEST(RpcTest, HandlerErrorsBecomeTheCallersStatus) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  ASSERT_OK(cluster.messenger(2).Register(kFail, [](const Message& m, std::string* reply) {
    reply->assign("ignored");
    return absl::NotFoundError(absl::StrCat("no key ", std::string(m.payload)));
  }));
  absl::StatusOr<std::string> r =
      CallAndWait(cluster.messenger(1), 2, kFail, "k1", absl::Seconds(1), Pump(cluster), cluster.clock());
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_EQ(r.status().message(), "no key k1");
  EXPECT_EQ(cluster.messenger(2).counters().rejected_total(), 0u) << "an ordinary error is not a reject";
}

TEST(RpcTest, UnknownTypesAreRejectedAndCounted) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  absl::StatusOr<std::string> r =
      CallAndWait(cluster.messenger(1), 2, 999, "?", absl::Seconds(1), Pump(cluster), cluster.clock());
  EXPECT_TRUE(absl::IsUnimplemented(r.status())) << r.status();
  EXPECT_EQ(cluster.messenger(2).stats().unhandled_requests, 1u);
  ASSERT_OK(cluster.messenger(1).Send(2, 998, "?"));
  ASSERT_TRUE(cluster.PumpUntil(
      [&] { return cluster.messenger(2).counters().rejected_for(RejectReason::kUnknownType) == 1; }));
  EXPECT_OK(cluster.messenger(2).peer_health(1));
  EXPECT_OK(cluster.messenger(1).peer_health(2));
}

// A restarting node gets requests of layers it has not started yet (the CM's transaction recovery), one
// after another for as long as the restart takes. Each is answered; none counts against the ring.
TEST(RpcTest, ARunOfRequestsWithoutAHandlerLeavesTheRingHealthy) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  const size_t many = 4 * RingReceiverOptions{}.max_consecutive_rejects;
  for (size_t i = 0; i < many; ++i) {
    absl::StatusOr<std::string> r =
        CallAndWait(cluster.messenger(1), 2, 110, "?", absl::Seconds(1), Pump(cluster), cluster.clock());
    ASSERT_TRUE(absl::IsUnimplemented(r.status())) << i << ": " << r.status();
  }
  EXPECT_EQ(cluster.messenger(2).stats().unhandled_requests, many);
  EXPECT_OK(cluster.messenger(2).peer_health(1));
  EXPECT_OK(cluster.messenger(1).peer_health(2));
}

// A client whose transaction layer attaches after it joined gets log-epoch messages first: a type it
// Expect()s is dropped without counting against the ring, however long the run.
TEST(RpcTest, ARunOfOneWayMessagesOfAnExpectedTypeLeavesTheRingHealthy) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  cluster.messenger(2).Expect(108);
  const size_t many = 4 * RingReceiverOptions{}.max_consecutive_rejects;
  for (size_t i = 0; i < many; ++i) {
    ASSERT_OK(cluster.messenger(1).Send(2, 108, "epoch"));
    ASSERT_TRUE(cluster.PumpUntil([&] { return cluster.messenger(2).stats().unhandled_expected == i + 1; })) << i;
  }
  EXPECT_EQ(cluster.messenger(2).counters().rejected_total(), 0u);
  EXPECT_OK(cluster.messenger(2).peer_health(1));
  EXPECT_OK(cluster.messenger(1).peer_health(2));
  // Once registered, the handler gets them.
  int handled = 0;
  ASSERT_OK(cluster.messenger(2).Register(108, [&](const Message&, std::string*) {
    ++handled;
    return absl::OkStatus();
  }));
  ASSERT_OK(cluster.messenger(1).Send(2, 108, "epoch"));
  ASSERT_TRUE(cluster.PumpUntil([&] { return handled == 1; }));
  // An unexpected type is still a reject.
  ASSERT_OK(cluster.messenger(1).Send(2, 997, "?"));
  ASSERT_TRUE(cluster.PumpUntil(
      [&] { return cluster.messenger(2).counters().rejected_for(RejectReason::kUnknownType) == 1; }));
}

// A handler that writes into local memory on a peer's behalf, checking the address first (check_range.h).
class MemoryServer {
 public:
  MemoryServer() : memory_(4096, 0), sizes_{0, 4096} {}  // region 0 not held here, region 1 is 4 KiB

  absl::Status HandleWrite(const Message& m, std::string* reply) {
    if (m.payload.size() < 8) return absl::InvalidArgumentError("write request shorter than its address");
    uint64_t address;
    std::memcpy(&address, m.payload.data(), 8);
    const std::string_view bytes = m.payload.substr(8);
    if (absl::Status s = CheckRange(sizes_, address, bytes.size()); !s.ok()) return s;
    std::memcpy(memory_.data() + OffsetOf(address), bytes.data(), bytes.size());
    if (reply != nullptr) reply->assign("ok");
    return absl::OkStatus();
  }
  const std::string& memory() const { return memory_; }

 private:
  std::string memory_;
  std::vector<uint64_t> sizes_;
};

std::string WriteRequest(uint64_t address, std::string_view bytes) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &address, 8);
  out.append(bytes);
  return out;
}

TEST(RpcTest, HandlerChecksAddressesAgainstItsRegions) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  MemoryServer server;
  ASSERT_OK(cluster.messenger(2).Register(
      kWrite, [&](const Message& m, std::string* reply) { return server.HandleWrite(m, reply); }));
  auto call = [&](std::string request) {
    return CallAndWait(cluster.messenger(1), 2, kWrite, request, absl::Seconds(1), Pump(cluster), cluster.clock());
  };
  absl::StatusOr<std::string> ok = call(WriteRequest(GlobalAddress(1, 100), "hello"));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(server.memory().substr(100, 5), "hello");
  EXPECT_EQ(server.memory().substr(4091, 5), std::string(5, '\0'));
  ok = call(WriteRequest(GlobalAddress(1, 4091), "12345"));  // exactly up to the end
  ASSERT_TRUE(ok.ok()) << ok.status();

  const std::vector<std::pair<std::string, absl::StatusCode>> bad = {
      {WriteRequest(GlobalAddress(1, 4092), "12345"), absl::StatusCode::kOutOfRange},  // one byte past the end
      {WriteRequest(GlobalAddress(1, 0xFFFFFFFF), "x"), absl::StatusCode::kOutOfRange},
      {WriteRequest(GlobalAddress(0, 0), "x"), absl::StatusCode::kOutOfRange},      // a region not held here
      {WriteRequest(GlobalAddress(77, 0), "x"), absl::StatusCode::kOutOfRange},     // no such region
      {WriteRequest(GlobalAddress(1, 10), ""), absl::StatusCode::kInvalidArgument},  // zero length
      {"short", absl::StatusCode::kInvalidArgument},
  };
  for (const auto& [request, code] : bad) {
    absl::StatusOr<std::string> r = call(request);
    EXPECT_EQ(r.status().code(), code) << r.status();
  }
  EXPECT_EQ(cluster.messenger(2).counters().rejected_for(RejectReason::kBadPayload), bad.size());
  EXPECT_OK(cluster.messenger(2).peer_health(1));  // fewer than max_consecutive_rejects in a row
  EXPECT_EQ(server.memory().find_first_not_of(std::string("\0", 1)), 100u);
}

TEST(RpcTest, TooManyMalformedMessagesInARowMarkThePeerBad) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster::Options options = ClusterOptions(seed);
  options.messenger.receiver.max_consecutive_rejects = 5;
  SimMsgCluster cluster(options);
  ASSERT_OK(cluster.Start(2));
  MemoryServer server;
  ASSERT_OK(cluster.messenger(2).Register(
      kWrite, [&](const Message& m, std::string* reply) { return server.HandleWrite(m, reply); }));
  ASSERT_OK(cluster.messenger(2).Register(kEcho, Echo));
  ASSERT_OK(cluster.messenger(1).Register(kEcho, Echo));
  // Node 2 has a call out to node 1 when node 1 turns bad.
  absl::Status call_status;
  bool called = false;
  ASSERT_OK(cluster.messenger(2).Call(1, kEcho, "hi", absl::Seconds(10), [&](absl::StatusOr<std::string_view> r) {
    called = true;
    call_status = r.status();
  }));
  cluster.PumpOnce({1});  // node 1 does not answer yet
  for (int i = 0; i < 5; ++i) ASSERT_OK(cluster.messenger(1).Send(2, kWrite, WriteRequest(GlobalAddress(9, 0), "x")));
  ASSERT_OK(cluster.messenger(1).Flush());
  ASSERT_TRUE(cluster.PumpUntil([&] { return !cluster.messenger(2).peer_health(1).ok(); }, 100000,
                                absl::Microseconds(50), {1}));
  EXPECT_TRUE(absl::IsUnavailable(cluster.messenger(2).peer_health(1)));
  EXPECT_TRUE(absl::IsDataLoss(cluster.messenger(2).receive_ring(0)->health()));
  EXPECT_EQ(cluster.messenger(2).counters().rejected_for(RejectReason::kBadPayload), 5u);
  EXPECT_TRUE(called);
  EXPECT_TRUE(absl::IsUnavailable(call_status)) << call_status;
  EXPECT_TRUE(absl::IsUnavailable(cluster.messenger(2).Send(1, kEcho, "x")));
  EXPECT_EQ(cluster.messenger(2).pending_calls(), 0u);
}

TEST(RpcTest, CallToAPartitionedPeerFailsAtItsDeadline) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimulatedClock clock;  // the messenger's own clock, stepped by the test, so the deadline is exact
  SimMsgCluster::Options options = ClusterOptions(seed);
  options.clock = &clock;
  SimMsgCluster cluster(options);
  ASSERT_OK(cluster.Start(2));
  ASSERT_OK(cluster.messenger(2).Register(kEcho, Echo));
  cluster.network.Partition(1, 2);
  const absl::Time start = clock.Now();
  absl::Time failed_at = absl::InfinitePast();
  absl::Status status;
  ASSERT_OK(cluster.messenger(1).Call(2, kEcho, "lost", absl::Milliseconds(20),
                                      [&](absl::StatusOr<std::string_view> r) {
                                        status = r.status();
                                        failed_at = clock.Now();
                                      }));
  ASSERT_EQ(cluster.messenger(1).pending_calls(), 1u);
  // The request is lost in the partition. Node 1's fabric reports the lost write only at its operation
  // timeout, which here is longer than the call's (the simulation reaches it at once, by jumping virtual
  // time, so node 1's worker is not polled until the call's deadline has been checked).
  for (int ms = 0; ms < 100 && failed_at == absl::InfinitePast(); ++ms) {
    for (int i = 0; i < 10; ++i) {
      cluster.messenger(1).Poll();
      PollWorkerAndMessenger(cluster.worker(2), cluster.messenger(2));
    }
    clock.Advance(absl::Milliseconds(1));
  }
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_EQ(failed_at - start, absl::Milliseconds(20));
  EXPECT_EQ(cluster.messenger(1).pending_calls(), 0u) << "the timed-out call leaked";
  EXPECT_EQ(cluster.messenger(1).stats().timeouts, 1u);
  // Then the fabric's verdict arrives: the peer is failed, and nothing is left behind.
  for (int i = 0; i < 100; ++i) cluster.PumpOnce();
  EXPECT_TRUE(absl::IsUnavailable(cluster.messenger(1).peer_health(2))) << cluster.messenger(1).peer_health(2);
  EXPECT_EQ(cluster.messenger(1).pending_calls(), 0u);
}

// A message wanted soon (a COMMIT-PRIMARY) goes without waking the peer: its doorbell rides with the
// next message that wakes the peer, or Poll rings it once it has been owed owed_wake_delay, or
// WakeOwedPeers (a thread about to sleep) rings it at once.
TEST(RpcTest, ADoorbellOwedForAMessageWantedSoonIsRungWithinItsDelay) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimulatedClock clock;  // stepped by the test, so the delay is exact
  SimMsgCluster::Options options = ClusterOptions(seed);
  options.clock = &clock;
  options.messenger.owed_wake_delay = absl::Microseconds(100);
  SimMsgCluster cluster(options);
  ASSERT_OK(cluster.Start(2));
  std::vector<std::string> got;
  ASSERT_OK(cluster.messenger(2).Register(kNote, [&](const Message& m, std::string*) {
    got.emplace_back(m.payload);
    return absl::OkStatus();
  }));
  Messenger& m = cluster.messenger(1);
  CountingEndpoint& to_2 = cluster.endpoint(1, 2);
  auto send_soon = [&](std::string_view what) {
    SendOptions soon;
    soon.wake = Wake::kSoon;
    return m.Send(2, kNote, what, std::move(soon));
  };
  ASSERT_OK(send_soon("a"));
  m.Poll();
  EXPECT_EQ(to_2.quiet_flushes(), 1u);
  EXPECT_EQ(to_2.flushes(), 0u);
  EXPECT_EQ(to_2.wakes(), 0u);
  clock.Advance(absl::Microseconds(99));
  m.Poll();
  EXPECT_EQ(to_2.wakes(), 0u) << "rung before its delay";
  clock.Advance(absl::Microseconds(1));
  m.Poll();
  EXPECT_EQ(to_2.wakes(), 1u) << "not rung at its delay";
  clock.Advance(absl::Milliseconds(1));
  m.Poll();
  EXPECT_EQ(to_2.wakes(), 1u) << "rung twice";
  // A message that wakes the peer pays the debt: nothing is rung later.
  ASSERT_OK(send_soon("b"));
  m.Poll();
  ASSERT_OK(m.Send(2, kNote, "c"));
  m.Poll();
  EXPECT_EQ(to_2.flushes(), 1u);
  clock.Advance(absl::Milliseconds(1));
  m.Poll();
  EXPECT_EQ(to_2.wakes(), 1u) << "a debt the waking flush paid was rung again";
  // Before its thread sleeps, the messenger rings what it owes at once.
  ASSERT_OK(send_soon("d"));
  m.Poll();
  m.WakeOwedPeers();
  EXPECT_EQ(to_2.wakes(), 2u);
  clock.Advance(absl::Milliseconds(1));
  m.Poll();
  EXPECT_EQ(to_2.wakes(), 2u);
  ASSERT_TRUE(cluster.PumpUntil([&] { return got.size() == 4; }));
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(m.stats().owed_wakes, 3u);
  EXPECT_EQ(m.stats().owed_wakes_rung, 2u) << "b's rode with c";
}

TEST(RpcTest, PartitionEventuallyFailsThePeer) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));  // fabric operation timeout 100 ms
  ASSERT_OK(cluster.Start(2));
  cluster.network.Partition(1, 2);
  absl::Status status;
  bool done = false;
  ASSERT_OK(cluster.messenger(1).Call(2, kEcho, "lost", absl::Seconds(10), [&](absl::StatusOr<std::string_view> r) {
    status = r.status();
    done = true;
  }));
  ASSERT_TRUE(cluster.PumpUntil([&] { return done; }));
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_LT(cluster.clock().Now() - absl::UnixEpoch(), absl::Seconds(1)) << "failed by the fabric timeout";
  EXPECT_TRUE(absl::IsUnavailable(cluster.messenger(1).Call(2, kEcho, "x", absl::Seconds(1),
                                                            [](absl::StatusOr<std::string_view>) {})));
  EXPECT_EQ(cluster.messenger(1).pending_calls(), 0u);
}

TEST(RpcTest, CrashedPeerFailsPendingCalls) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  int failed = 0;
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(cluster.messenger(1).Call(2, kEcho, "x", absl::Seconds(10), [&](absl::StatusOr<std::string_view> r) {
      EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
      ++failed;
    }));
  }
  cluster.network.Crash(2);
  ASSERT_TRUE(cluster.PumpUntil([&] { return failed == 10; }, 100000, absl::Microseconds(50), {2}));
  EXPECT_EQ(cluster.messenger(1).pending_calls(), 0u);
}

TEST(RpcTest, LateRepliesAreCountedNotRejected) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  ASSERT_OK(cluster.messenger(2).Register(kEcho, Echo));
  absl::Status status;
  ASSERT_OK(cluster.messenger(1).Call(2, kEcho, "slow", absl::Milliseconds(5),
                                      [&](absl::StatusOr<std::string_view> r) { status = r.status(); }));
  ASSERT_OK(cluster.messenger(1).Flush());
  // Node 2 does not poll until the call has timed out.
  ASSERT_TRUE(cluster.PumpUntil([&] { return !status.ok(); }, 100000, absl::Microseconds(500), {2}));
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  ASSERT_TRUE(cluster.PumpUntil([&] { return cluster.messenger(1).stats().late_replies == 1; }));
  EXPECT_EQ(cluster.messenger(1).counters().rejected_total(), 0u);
  EXPECT_OK(cluster.messenger(1).peer_health(2));
}

TEST(RpcTest, ReplyFromTheWrongPeerIsRejected) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(3));
  bool done = false;
  ASSERT_OK(cluster.messenger(1).Call(2, kEcho, "to 2", absl::Seconds(10), [&](absl::StatusOr<std::string_view> r) {
    EXPECT_EQ(*r, "from 2");
    done = true;
  }));
  // Node 3 forges a reply to node 1's first call (request id 1).
  char envelope[kEnvelopeSize];
  EncodeEnvelope(envelope, Envelope{1, RpcKind::kReply, absl::StatusCode::kOk});
  ASSERT_OK(cluster.messenger(3).sender(1)->Send(kEcho, std::string_view(envelope, kEnvelopeSize), "from 3"));
  ASSERT_TRUE(cluster.PumpUntil(
      [&] { return cluster.messenger(1).counters().rejected_for(RejectReason::kUnexpectedReply) == 1; }, 100000,
      absl::Microseconds(50), {2}));
  EXPECT_FALSE(done);
  ASSERT_OK(cluster.messenger(2).sender(1)->Send(kEcho, std::string_view(envelope, kEnvelopeSize), "from 2"));
  ASSERT_TRUE(cluster.PumpUntil([&] { return done; }));
}

TEST(RpcTest, RepliesWaitForRoomInsteadOfFailing) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  ASSERT_OK(cluster.messenger(2).Register(kBig, [](const Message& m, std::string* reply) {
    *reply = Pattern(m.payload.size(), 400);
    return absl::OkStatus();
  }));
  // Node 1 completes its writes but does not read its ring meanwhile: node 2's replies pile up.
  auto pump_but_do_not_read_node_1 = [&] {
    fabric::Completion done[32];
    const size_t n = cluster.worker(1).Poll(done);
    for (size_t i = 0; i < n; ++i) cluster.messenger(1).OnCompletion(done[i]);
    if (n + cluster.PumpOnce({1}) == 0) cluster.network.Advance(absl::Microseconds(50));
  };
  constexpr int kCalls = 60;
  int ok = 0;
  for (int i = 0, attempts = 0; i < kCalls; ++attempts) {
    ASSERT_LT(attempts, 100000);
    absl::Status s = cluster.messenger(1).Call(2, kBig, std::string(i, 'q'), absl::Seconds(10),
                                               [&, i](absl::StatusOr<std::string_view> r) {
                                                 ASSERT_TRUE(r.ok()) << r.status();
                                                 EXPECT_EQ(*r, Pattern(i, 400));
                                                 ++ok;
                                               });
    if (s.ok()) {
      ++i;
      continue;
    }
    ASSERT_TRUE(absl::IsResourceExhausted(s)) << s;
    ASSERT_OK(cluster.messenger(1).Flush());
    pump_but_do_not_read_node_1();
  }
  ASSERT_OK(cluster.messenger(1).Flush());
  for (int i = 0; i < 1000; ++i) pump_but_do_not_read_node_1();
  EXPECT_GT(cluster.messenger(2).stats().replies_deferred, 0u);
  EXPECT_EQ(ok, 0);
  ASSERT_TRUE(cluster.PumpUntil([&] { return ok == kCalls; }));
  EXPECT_OK(cluster.messenger(2).peer_health(1));
}

TEST(RpcTest, MisuseIsRefused) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  Messenger& m = cluster.messenger(1);
  auto ignore = [](absl::StatusOr<std::string_view>) {};
  EXPECT_TRUE(absl::IsUnavailable(m.Call(7, kEcho, "x", absl::Seconds(1), ignore)));  // not connected
  EXPECT_TRUE(absl::IsInvalidArgument(m.Call(2, 0, "x", absl::Seconds(1), ignore)));
  ASSERT_OK_AND_ASSIGN(size_t max, m.max_payload(2));
  EXPECT_EQ(max, 992u - kEnvelopeSize);
  EXPECT_TRUE(absl::IsInvalidArgument(m.Call(2, kEcho, std::string(max + 1, 'x'), absl::Seconds(1), ignore)));
  EXPECT_EQ(m.pending_calls(), 0u) << "a refused call is not pending";
  EXPECT_TRUE(absl::IsInvalidArgument(m.Register(0, Echo)));
  ASSERT_OK(m.Register(kEcho, Echo));
  EXPECT_TRUE(absl::IsAlreadyExists(m.Register(kEcho, Echo)));
  // Inside a handler: no Register, no nested Poll.
  bool ran = false;
  ASSERT_OK(cluster.messenger(2).Register(kNote, [&](const Message&, std::string*) {
    EXPECT_TRUE(absl::IsFailedPrecondition(cluster.messenger(2).Register(99, Echo)));
    EXPECT_EQ(cluster.messenger(2).Poll(), 0u);
    ran = true;
    return absl::OkStatus();
  }));
  ASSERT_OK(m.Send(2, kNote, ""));
  ASSERT_TRUE(cluster.PumpUntil([&] { return ran; }));
  // A reply too large for the ring becomes an error.
  ASSERT_OK(cluster.messenger(2).Register(kBig, [](const Message&, std::string* reply) {
    reply->assign(5000, 'x');
    return absl::OkStatus();
  }));
  absl::StatusOr<std::string> r =
      CallAndWait(m, 2, kBig, "", absl::Seconds(1), Pump(cluster), cluster.clock());
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
}

// Three nodes call and message each other at random, through torn copies and dropped writes.
TEST(RpcTest, StressAmongThreeNodesWithTornCopiesAndDrops) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster::Options options = ClusterOptions(seed);
  options.sim.drop_probability = 0.02;
  options.capacity = 8192;
  SimMsgCluster cluster(options);
  constexpr NodeId kNodes = 3;
  ASSERT_OK(cluster.Start(kNodes));
  std::mt19937_64 rng(seed);
  // One-way messages from each node to each other node carry a per-pair sequence number.
  std::map<std::pair<NodeId, NodeId>, uint64_t> notes_sent, notes_got;
  for (NodeId n = 1; n <= kNodes; ++n) {
    ASSERT_OK(cluster.messenger(n).Register(kEcho, Echo));
    ASSERT_OK(cluster.messenger(n).Register(kNote, [&, n](const Message& m, std::string*) {
      uint64_t seq;
      std::memcpy(&seq, m.payload.data(), 8);
      uint64_t& expected = notes_got[std::make_pair(m.peer, n)];
      EXPECT_EQ(seq, expected++) << m.peer << "->" << n;
      EXPECT_EQ(m.payload.substr(8), Pattern(seq, m.payload.size() - 8));
      return absl::OkStatus();
    }));
  }
  uint64_t calls = 0, replies = 0, refused = 0;
  for (int step = 0; step < 20000; ++step) {
    const NodeId from = 1 + rng() % kNodes;
    const NodeId to = 1 + (from + rng() % (kNodes - 1)) % kNodes;
    const size_t length = 8 + rng() % 600;
    absl::Status s;
    if (rng() % 2) {
      const std::string request = Pattern(step, length);
      s = cluster.messenger(from).Call(to, kEcho, request, absl::Seconds(100),
                                       [&, request](absl::StatusOr<std::string_view> r) {
                                         ASSERT_TRUE(r.ok()) << r.status();
                                         EXPECT_EQ(*r, request);
                                         ++replies;
                                       });
      if (s.ok()) ++calls;
    } else {
      uint64_t& seq = notes_sent[std::make_pair(from, to)];
      std::string note(8, '\0');
      std::memcpy(note.data(), &seq, 8);
      note += Pattern(seq, length);
      s = cluster.messenger(from).Send(to, kNote, note);
      if (s.ok()) ++seq;
    }
    if (!s.ok()) {
      ASSERT_TRUE(absl::IsResourceExhausted(s)) << s;
      ++refused;
    }
    if (rng() % 4 == 0) cluster.PumpOnce();
  }
  ASSERT_TRUE(cluster.PumpUntil([&] { return replies == calls; }));
  EXPECT_EQ(notes_got, notes_sent);
  for (NodeId n = 1; n <= kNodes; ++n) {
    EXPECT_EQ(cluster.messenger(n).counters().rejected_total(), 0u) << cluster.messenger(n).counters().DebugString();
    EXPECT_EQ(cluster.messenger(n).pending_calls(), 0u);
  }
  EXPECT_GT(cluster.network.stats().dropped, 0u);
  EXPECT_GT(calls, 5000u);
}

// Each node driven by its own thread, as a Node will: the simulation's copies into a ring (made by whichever
// thread runs the event, under the network's lock) race with the owner's polling by design; the receiver
// only ever reads ring memory through LoadShared and checks the copy (ThreadSanitizer runs this too).
TEST(RpcTest, TwoThreadsOnTheSimulation) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  constexpr int kCalls = 2000;
  int replies[2] = {0, 0};
  int bad[2] = {0, 0};
  for (NodeId n : {1u, 2u}) ASSERT_OK(cluster.messenger(n).Register(kEcho, Echo));
  std::atomic<int> finished{0};
  auto run = [&](NodeId self) {
    Messenger& m = cluster.messenger(self);
    int made = 0;
    bool done = false;
    for (int round = 0; round < 10'000'000 && finished.load() < 2; ++round) {
      if (made < kCalls) {
        const std::string request = Pattern(made + 100000 * self, made % 300);
        absl::Status s = m.Call(3 - self, kEcho, request, absl::Seconds(100),
                                [&, self, request](absl::StatusOr<std::string_view> r) {
                                  ++replies[self - 1];
                                  if (!r.ok() || *r != request) ++bad[self - 1];
                                });
        if (s.ok()) ++made;
      }
      PollWorkerAndMessenger(cluster.worker(self), m);
      if (!done && replies[self - 1] == kCalls) {
        done = true;
        finished.fetch_add(1);
      }
    }
  };
  std::thread other(run, 2);
  run(1);
  other.join();
  EXPECT_EQ(replies[0], kCalls);
  EXPECT_EQ(replies[1], kCalls);
  EXPECT_EQ(bad[0] + bad[1], 0);
}

// RemovePeer: pending calls end with Cancelled, the peer is unknown afterwards, completions still in flight
// for its rings are ignored, the other peers are untouched, and the retired rings are freed after the grace.
TEST(RpcRemovePeerTest, RemovedPeerIsForgottenAndOthersContinue) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster::Options options = ClusterOptions(seed);
  options.messenger.retire_grace = absl::Milliseconds(5);
  SimMsgCluster cluster(options);
  ASSERT_OK(cluster.Start(3));
  for (NodeId n : {1u, 2u, 3u}) ASSERT_OK(cluster.messenger(n).Register(kEcho, Echo));
  ASSERT_TRUE(CallAndWait(cluster.messenger(1), 2, kEcho, "warm", absl::Seconds(1), Pump(cluster), cluster.clock())
                  .ok());

  std::optional<absl::Status> ended;
  ASSERT_OK(cluster.messenger(1).Call(2, kEcho, "in flight", absl::Seconds(1),
                                      [&](absl::StatusOr<std::string_view> r) { ended = r.status(); }));
  ASSERT_OK(cluster.messenger(1).Flush());  // the request's write is in flight now
  ASSERT_OK(cluster.messenger(1).RemovePeer(2));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(cluster.messenger(1).RemovePeer(2).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cluster.messenger(1).Call(2, kEcho, "x", absl::Seconds(1), [](auto) {}).code(),
            absl::StatusCode::kUnavailable);
  // Completions for the removed rings (and node 2's reply) arrive and are ignored; node 3 still answers.
  for (int i = 0; i < 200; ++i) Pump(cluster)();
  auto reply = CallAndWait(cluster.messenger(1), 3, kEcho, "still here", absl::Seconds(1), Pump(cluster),
                           cluster.clock());
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, "still here");
  // Past the grace, Poll frees the retired rings (ASan checks nothing touches them afterwards).
  cluster.network.Advance(absl::Milliseconds(10));
  for (int i = 0; i < 50; ++i) Pump(cluster)();
  EXPECT_TRUE(CallAndWait(cluster.messenger(1), 3, kEcho, "after", absl::Seconds(1), Pump(cluster), cluster.clock())
                  .ok());
}

}  // namespace
}  // namespace fathom::msg

namespace fathom::msg {
namespace {

using fabric::sim::SeedTrace;
using fabric::sim::TestSeed;
using testing::Pattern;
using testing::SimMsgCluster;

constexpr MessageType kLog = 7;

SimMsgCluster::Options SmallRingOptions(uint64_t seed) {
  SimMsgCluster::Options options;
  options.sim.seed = seed;
  options.sim.torn_copies = true;
  options.sim.max_latency = absl::Microseconds(10);
  options.sim.fabric.operation_timeout = absl::Milliseconds(100);
  options.capacity = 4096;
  return options;
}

TEST(SetAsideTest, RoomSetAsideIsNotTakenByOtherSends) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(SmallRingOptions(seed));
  ASSERT_OK(cluster.Start(2));
  Messenger& sender = cluster.messenger(1);
  // Node 2 never polls in this test: nothing is consumed, so the ring's room only shrinks.
  const std::vector<size_t> sizes = {300, 300, 300};
  ASSERT_OK_AND_ASSIGN(uint64_t set_aside, sender.SetAside(2, sizes));
  EXPECT_GE(set_aside, 900u);
  int plain = 0;
  while (sender.Send(2, kLog, Pattern(plain, 100)).ok()) ++plain;
  EXPECT_GT(plain, 0);
  EXPECT_TRUE(absl::IsResourceExhausted(sender.Send(2, kLog, Pattern(plain, 100))));
  // The promised messages still go in, and a fourth one is refused for want of promised room.
  for (int i = 0; i < 3; ++i) {
    SendOptions options;
    options.set_aside = &set_aside;
    SCOPED_TRACE(i);
    ASSERT_OK(sender.Send(2, kLog, Pattern(1000 + i, 300), std::move(options)));
  }
  SendOptions extra;
  extra.set_aside = &set_aside;
  EXPECT_TRUE(absl::IsFailedPrecondition(sender.Send(2, kLog, Pattern(2000, 300), std::move(extra))));
  sender.ReleaseSetAside(2, set_aside);
  // More room than the ring has is refused at once.
  const std::vector<size_t> too_much(20, 300);
  EXPECT_TRUE(absl::IsResourceExhausted(sender.SetAside(2, too_much).status()));
  const std::vector<size_t> oversized = {1 << 20};
  EXPECT_TRUE(absl::IsInvalidArgument(sender.SetAside(2, oversized).status()));
}

TEST(SetAsideTest, WrittenCallbacksRunWhenTheBytesAreInThePeersMemory) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(SmallRingOptions(seed));
  ASSERT_OK(cluster.Start(2));
  std::vector<int> written;
  int received = 0;
  ASSERT_OK(cluster.messenger(2).Register(kLog, [&](const Message&, std::string*) {
    ++received;
    return absl::OkStatus();
  }));
  for (int i = 0; i < 5; ++i) {
    SendOptions options;
    options.on_written = [&written, i](absl::Status s) {
      EXPECT_OK(s);
      written.push_back(i);
    };
    ASSERT_OK(cluster.messenger(1).Send(2, kLog, Pattern(i, 64), std::move(options)));
  }
  EXPECT_TRUE(written.empty()) << "nothing is written before a flush";
  // Only node 1 runs: its writes complete while node 2's CPU never looks at them.
  ASSERT_TRUE(cluster.PumpUntil([&] { return written.size() == 5; }, 100000, absl::Microseconds(100), {2}));
  EXPECT_EQ(written, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(received, 0);
  ASSERT_TRUE(cluster.PumpUntil([&] { return received == 5; }));
}

TEST(SetAsideTest, WrittenCallbacksFailWithTheirPeer) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(SmallRingOptions(seed));
  ASSERT_OK(cluster.Start(2));
  absl::Status result = absl::OkStatus();
  bool called = false;
  SendOptions options;
  options.on_written = [&](absl::Status s) {
    called = true;
    result = s;
  };
  cluster.network.Crash(2);
  ASSERT_OK(cluster.messenger(1).Send(2, kLog, "to a crashed node", std::move(options)));
  ASSERT_TRUE(cluster.PumpUntil([&] { return called; }, 100000, absl::Microseconds(100), {2}));
  EXPECT_FALSE(result.ok());
}

// A written-callback that sends to the peer again when RemovePeer fails it (as a COMMIT-BACKUP or ABORT is
// resent at once) finds no connection: it must not queue into the peer being removed, where its own
// callback would never run (the commit waited forever; its locks stayed held).
TEST(RpcRemovePeerTest, AWrittenCallbackThatSendsAgainFindsThePeerGone) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  Messenger& m = cluster.messenger(1);
  std::optional<absl::Status> first;
  std::optional<absl::Status> resent;
  std::optional<absl::Status> resend_written;
  SendOptions options;
  options.on_written = [&](absl::Status s) {
    first = s;
    if (s.ok()) return;
    SendOptions again;
    again.on_written = [&](absl::Status w) { resend_written = w; };
    resent = m.Send(2, kLog, "again", std::move(again));
  };
  ASSERT_OK(m.Send(2, kLog, "record", std::move(options)));  // queued, not written yet
  ASSERT_OK(m.RemovePeer(2));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->code(), absl::StatusCode::kCancelled);
  ASSERT_TRUE(resent.has_value());
  EXPECT_EQ(resent->code(), absl::StatusCode::kUnavailable) << *resent;
  EXPECT_FALSE(resend_written.has_value());
  EXPECT_EQ(m.written_waiters(), 0u);
}

// RemovePeer handles what the peer wrote before it was removed: recovery decides a removed coordinator's
// transactions from the records its participants hold, so none may be dropped unread.
TEST(RpcRemovePeerTest, MessagesWrittenBeforeRemovalAreHandled) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimMsgCluster cluster(ClusterOptions(seed));
  ASSERT_OK(cluster.Start(2));
  constexpr MessageType kNote = 9;
  std::vector<std::string> handled;
  ASSERT_OK(cluster.messenger(1).Register(kNote, [&](const Message& m, std::string*) {
    handled.emplace_back(m.payload);
    return absl::OkStatus();
  }));
  constexpr int kNotes = 5;
  int written = 0;
  for (int i = 0; i < kNotes; ++i) {
    SendOptions options;
    options.on_written = [&written](absl::Status s) { written += s.ok() ? 1 : 0; };
    ASSERT_OK(cluster.messenger(2).Send(1, kNote, absl::StrCat("note ", i), std::move(options)));
  }
  ASSERT_OK(cluster.messenger(2).Flush());
  // Node 1 does not poll: the notes wait in its ring.
  ASSERT_TRUE(cluster.PumpUntil([&] { return written == kNotes; }, 100000, absl::Microseconds(100), {1}));
  ASSERT_TRUE(handled.empty());
  ASSERT_OK(cluster.messenger(1).RemovePeer(2));
  ASSERT_EQ(handled.size(), size_t{kNotes});
  for (int i = 0; i < kNotes; ++i) EXPECT_EQ(handled[i], absl::StrCat("note ", i));
  EXPECT_EQ(cluster.messenger(1).stats().drained_at_removal, uint64_t{kNotes});
}


// Node 1 sends to node 2, which counts what it handles.
class LostMessageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<SimMsgCluster>(SmallRingOptions(seed_));
    ASSERT_OK(cluster_->Start(2));
    ASSERT_OK(cluster_->messenger(2).Register(kLog, [this](const Message&, std::string*) {
      ++received_;
      return absl::OkStatus();
    }));
  }

  const uint64_t seed_ = TestSeed();
  std::unique_ptr<SimMsgCluster> cluster_;
  int received_ = 0;
};

// A receiver that drops the connection (node.cc's disconnect) drains its rings and discards the rest; a
// write that lands after the drain completes at the sender all the same: "written", never read. on_lost
// tells the sender once its own side of the connection goes, so a record that must arrive goes again.
TEST_F(LostMessageTest, AMessageWrittenAfterTheReceiverDroppedTheConnectionIsReportedLost) {
  SCOPED_TRACE(SeedTrace(seed_));
  SimMsgCluster& cluster = *cluster_;
  int& received = received_;
  ASSERT_OK(cluster.messenger(2).RemovePeer(1));  // node 2 no longer reads what node 1 writes
  constexpr int kMessages = 3;
  int written = 0;
  std::vector<int> lost;
  for (int i = 0; i < kMessages; ++i) {
    SendOptions options;
    options.on_written = [&written](absl::Status s) { written += s.ok() ? 1 : 0; };
    options.on_lost = [&lost, i](absl::Status s) {
      EXPECT_TRUE(absl::IsCancelled(s)) << s;
      lost.push_back(i);
    };
    ASSERT_OK(cluster.messenger(1).Send(2, kLog, Pattern(i, 64), std::move(options)));
  }
  ASSERT_TRUE(cluster.PumpUntil([&] { return written == kMessages; }));
  for (int i = 0; i < 100; ++i) cluster.PumpOnce();
  EXPECT_EQ(received, 0);
  EXPECT_TRUE(lost.empty()) << "nothing tells node 1 before its own side goes";
  EXPECT_EQ(cluster.messenger(1).lost_waiters(), size_t{kMessages});
  ASSERT_OK(cluster.messenger(1).RemovePeer(2));
  EXPECT_EQ(lost, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(cluster.messenger(1).lost_waiters(), 0u);
  EXPECT_EQ(cluster.messenger(1).stats().lost_after_written, uint64_t{kMessages});
}

// Messages the receiver consumed and credited are forgotten, not reported: only those past its last credit
// (which it may or may not have read: credits are lazy) are.
TEST_F(LostMessageTest, MessagesTheReceiverCreditedAreNotReported) {
  SCOPED_TRACE(SeedTrace(seed_));
  SimMsgCluster& cluster = *cluster_;
  int& received = received_;
  // 200-byte messages in a 4096-byte ring: the receiver writes its head back every half ring, so some
  // are credited and the last few are not.
  constexpr int kMessages = 12;
  std::vector<int> lost;
  for (int i = 0; i < kMessages; ++i) {
    SendOptions options;
    options.on_lost = [&lost, i](absl::Status) { lost.push_back(i); };
    ASSERT_OK(cluster.messenger(1).Send(2, kLog, Pattern(i, 200), std::move(options)));
    ASSERT_TRUE(cluster.PumpUntil([&] { return received == i + 1; }));
  }
  ASSERT_TRUE(cluster.PumpUntil([&] { return cluster.messenger(1).lost_waiters() < size_t{kMessages}; }));
  const size_t kept = cluster.messenger(1).lost_waiters();
  EXPECT_GT(kept, 0u) << "the last messages are past the last credit";
  ASSERT_OK(cluster.messenger(1).RemovePeer(2));
  ASSERT_EQ(lost.size(), kept);
  for (size_t k = 0; k < kept; ++k) EXPECT_EQ(lost[k], kMessages - static_cast<int>(kept) + static_cast<int>(k));
}

// A messenger being destroyed runs no on_lost callback: the peer lost nothing, and a redelivery would only
// go out while this end stops (it did: every record not yet credited went again at every shutdown).
TEST_F(LostMessageTest, DestroyingTheMessengerReportsNothingLost) {
  SCOPED_TRACE(SeedTrace(seed_));
  SimMsgCluster& cluster = *cluster_;
  bool written = false;
  bool lost = false;
  SendOptions options;
  options.on_written = [&written](absl::Status s) { written = s.ok(); };
  options.on_lost = [&lost](absl::Status) { lost = true; };
  ASSERT_OK(cluster.messenger(1).Send(2, kLog, Pattern(1, 64), std::move(options)));
  ASSERT_TRUE(cluster.PumpUntil([&] { return written; }, 100000, absl::Microseconds(100), {2}));
  ASSERT_EQ(cluster.messenger(1).lost_waiters(), 1u);
  cluster.messenger(1).CancelPending();
  EXPECT_FALSE(lost);
  EXPECT_EQ(cluster.messenger(1).lost_waiters(), 0u);
}

// A message whose write never happened is reported through on_written (the sender resends from there), not
// also through on_lost.
TEST_F(LostMessageTest, AMessageNeverWrittenIsReportedOnlyAsUnwritten) {
  SCOPED_TRACE(SeedTrace(seed_));
  SimMsgCluster& cluster = *cluster_;
  std::optional<absl::Status> written;
  bool lost = false;
  SendOptions options;
  options.on_written = [&written](absl::Status s) { written = s; };
  options.on_lost = [&lost](absl::Status) { lost = true; };
  ASSERT_OK(cluster.messenger(1).Send(2, kLog, "queued, never flushed", std::move(options)));
  ASSERT_OK(cluster.messenger(1).RemovePeer(2));
  ASSERT_TRUE(written.has_value());
  EXPECT_TRUE(absl::IsCancelled(*written)) << *written;
  EXPECT_FALSE(lost);
  EXPECT_EQ(cluster.messenger(1).lost_waiters(), 0u);
}

}  // namespace
}  // namespace fathom::msg
