// RingSender and RingReceiver on SimFabric: ordered, lossless delivery under torn copies, random latencies
// and drops; never overwriting unconsumed bytes; lazy head write-back; batching; full rings; failures.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/fabric/sim/test_seed.h"
#include "platform/msg/ring_receiver.h"
#include "platform/msg/ring_sender.h"
#include "platform/msg/test_util.h"

namespace fathom::msg {
namespace {

using fabric::sim::SeedTrace;
using fabric::sim::SimOptions;
using fabric::sim::TestSeed;
using testing::Pattern;
using testing::SimRingPair;

SimOptions TornOptions(uint64_t seed) {
  SimOptions options;
  options.seed = seed;
  options.torn_copies = true;
  options.max_torn_chunk = 48;
  options.min_latency = absl::Nanoseconds(200);
  options.max_latency = absl::Microseconds(20);
  options.fabric.operation_timeout = absl::Milliseconds(100);
  return options;
}

// Polls the receiver until `count` messages have come, each checked to be Pattern(i, bytes) in order;
// returns how many came.
int ReceivePatterns(SimRingPair& pair, int count, size_t bytes) {
  int got = 0;
  for (int round = 0; round < 10000 && got < count; ++round) {
    pair.PollReceiver([&](const RingRecord& r) {
      EXPECT_EQ(r.payload, Pattern(got++, bytes));
      return RejectReason::kNone;
    });
  }
  return got;
}

// What the receiver expects next, and checks every record against.
struct Expectation {
  std::mt19937_64* rng = nullptr;
  uint64_t next = 0;  // index of the next message
  std::vector<std::pair<uint16_t, size_t>> sent;  // type and length of message i
  uint64_t bytes = 0;

  RejectReason Check(const RingRecord& r) {
    EXPECT_LT(next, sent.size()) << "a record that was never sent";
    if (next >= sent.size()) return RejectReason::kNone;
    EXPECT_EQ(r.type, sent[next].first) << "message " << next;
    EXPECT_EQ(r.payload, Pattern(next, sent[next].second)) << "message " << next;
    bytes += r.payload.size();
    ++next;
    return RejectReason::kNone;
  }
};

// Streams `total_bytes` of messages of random sizes (1 B up to the ring's max payload) from node 1 to node 2,
// checking order, content and that no write ever lands on bytes the receiver has not consumed.
void Stream(SimRingPair& pair, std::mt19937_64& rng, uint64_t total_bytes, double receiver_poll_chance) {
  const uint32_t capacity = pair.sender->geometry().capacity();
  const uint32_t max_payload = pair.sender->geometry().max_payload();
  Expectation expect;
  expect.rng = &rng;
  uint64_t sent_bytes = 0;
  // Every ring write must end within one ring of what the receiver has consumed at the time it is posted.
  pair.a_to_b->on_write = [&](fabric::RemoteRegion, uint64_t, size_t) {
    EXPECT_LE(pair.sender->tail(), pair.receiver->consumed() + capacity) << "the sender overwrote unconsumed bytes";
  };
  size_t rounds = 0;
  while (expect.next < expect.sent.size() || sent_bytes < total_bytes) {
    ASSERT_LT(++rounds, 10'000'000u) << "no progress";
    // Queue a random batch.
    const int batch = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < batch && sent_bytes < total_bytes; ++i) {
      // Mostly small messages, some up to the maximum.
      const size_t length = rng() % 4 == 0 ? 1 + rng() % max_payload : 1 + rng() % 64;
      const uint16_t type = static_cast<uint16_t>(1 + rng() % 1000);
      const uint64_t index = expect.sent.size();
      absl::Status s = pair.sender->Send(type, Pattern(index, length));
      if (absl::IsResourceExhausted(s)) break;  // full: flush and let the receiver catch up
      ASSERT_TRUE(s.ok()) << s;
      expect.sent.emplace_back(type, length);
      sent_bytes += length;
    }
    absl::Status flushed = pair.sender->Flush();
    ASSERT_TRUE(flushed.ok() || absl::IsResourceExhausted(flushed)) << flushed;
    ASSERT_LE(pair.sender->credited(), pair.receiver->consumed());
    pair.PollWorkers();
    if (std::uniform_real_distribution<double>(0, 1)(rng) < receiver_poll_chance) {
      pair.receiver->Poll([&](const RingRecord& r) { return expect.Check(r); });
    }
    ASSERT_TRUE(pair.sender->health().ok()) << pair.sender->health();
    ASSERT_TRUE(pair.receiver->health().ok()) << pair.receiver->health();
  }
  EXPECT_EQ(expect.next, expect.sent.size());
  EXPECT_EQ(expect.bytes, sent_bytes);
  EXPECT_EQ(pair.receiver->counters().messages, expect.sent.size());
  EXPECT_EQ(pair.receiver->counters().rejected_total(), 0u);
  pair.a_to_b->on_write = nullptr;
}

TEST(RingTest, MillionsOfBytesArriveInOrderThroughTornCopies) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  SimRingPair pair(TornOptions(seed));
  // A 4 KiB ring, messages up to half of it: many wraps, paddings and full-ring waits.
  ASSERT_OK(pair.Start(4096, /*max_payload=*/2048 - 32));
  Stream(pair, rng, 8'000'000, /*receiver_poll_chance=*/0.3);
  EXPECT_GT(pair.sender->stats().full, 0u) << "the ring never filled up";
  EXPECT_GT(pair.network.stats().torn_chunks, 10000u);
  EXPECT_GT(pair.receiver->position(), 2000u * 4096) << "too few laps";
}

TEST(RingTest, DefaultMaxPayloadStreamsWithFastReceiver) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  SimRingPair pair(TornOptions(seed));
  ASSERT_OK(pair.Start(4096));
  Stream(pair, rng, 1'000'000, /*receiver_poll_chance=*/0.9);
}

TEST(RingTest, SurvivesDroppedWrites) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  SimOptions options = TornOptions(seed);
  options.drop_probability = 0.05;
  SimRingPair pair(options);
  ASSERT_OK(pair.Start(4096, 1024));
  Stream(pair, rng, 500'000, 0.5);
  EXPECT_GT(pair.network.stats().dropped, 0u);
  EXPECT_GT(pair.sender->stats().retried_writes, 0u);
}

TEST(RingTest, HeadIsWrittenBackAboutTwicePerLap) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimRingPair pair(TornOptions(seed));
  constexpr uint32_t kCapacity = 4096;
  ASSERT_OK(pair.Start(kCapacity));
  std::mt19937_64 rng(seed);
  uint64_t sent = 0, received = 0;
  constexpr uint64_t kMessages = 20000;
  while (received < kMessages) {
    if (sent < kMessages && pair.sender->Send(1, Pattern(sent, 1 + rng() % 100)).ok()) ++sent;
    ASSERT_OK(pair.sender->Flush());
    received += pair.PollReceiver([](const RingRecord&) { return RejectReason::kNone; });
  }
  const double laps = static_cast<double>(pair.receiver->consumed()) / kCapacity;
  const uint64_t head_writes = pair.b_to_a->writes();
  EXPECT_EQ(head_writes, pair.receiver->credit_writes());
  // Each write-back waits for half a ring of consumption past the last completed one, so a little less
  // than two per lap (the record that crosses the threshold overshoots it).
  EXPECT_GE(static_cast<double>(head_writes), 1.75 * laps) << laps << " laps";
  EXPECT_LE(static_cast<double>(head_writes), 2 * laps + 1) << laps << " laps";
  EXPECT_LT(head_writes * 20, kMessages) << "head written back far more often than every half ring";
}

TEST(RingTest, QueuedMessagesGoOutInOneWrite) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimRingPair pair(TornOptions(seed));
  ASSERT_OK(pair.Start(4096));
  for (int i = 0; i < 20; ++i) ASSERT_OK(pair.sender->Send(7, Pattern(i, 50)));
  EXPECT_EQ(pair.a_to_b->writes(), 0u) << "Send must only queue";
  ASSERT_OK(pair.sender->Flush());
  EXPECT_EQ(pair.a_to_b->writes(), 1u);
  EXPECT_EQ(pair.sender->stats().writes, 1u);
  EXPECT_EQ(ReceivePatterns(pair, 20, 50), 20);

  // A batch that crosses the ring's end: two writes (end of this lap, start of the next), never more.
  while (pair.sender->geometry().RoomBeforeEnd(pair.sender->tail()) > 500) {
    ASSERT_OK(pair.sender->Send(7, Pattern(0, 200)));
    ASSERT_OK(pair.sender->Flush());
    for (int round = 0; round < 1000; ++round) pair.PollReceiver([](const RingRecord&) { return RejectReason::kNone; });
  }
  const uint64_t before = pair.a_to_b->writes();
  for (int i = 0; i < 6; ++i) ASSERT_OK(pair.sender->Send(7, Pattern(i, 200)));
  ASSERT_OK(pair.sender->Flush());
  EXPECT_EQ(pair.a_to_b->writes() - before, 2u);
}

// Messages nobody waits on flush quietly (no doorbell over shared memory) until one that wakes is among
// them, or until over half the ring is unconsumed; quiet ones arrive all the same.
TEST(RingTest, OnlyMessagesThatWakeOrAFillingRingWakeTheReceiver) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimRingPair pair(TornOptions(seed));
  ASSERT_OK(pair.Start(4096));
  ASSERT_OK(pair.sender->Send(7, Pattern(0, 50), {}, nullptr, Wake::kWhenAwake));
  ASSERT_OK(pair.sender->Flush());
  EXPECT_EQ(pair.a_to_b->quiet_flushes(), 1u);
  EXPECT_EQ(pair.a_to_b->flushes(), 0u);
  ASSERT_OK(pair.sender->Send(7, Pattern(1, 50), {}, nullptr, Wake::kWhenAwake));
  ASSERT_OK(pair.sender->Send(7, Pattern(2, 50)));  // wakes: the batch does
  ASSERT_OK(pair.sender->Flush());
  EXPECT_EQ(pair.a_to_b->flushes(), 1u);
  ASSERT_OK(pair.sender->Send(7, Pattern(3, 50), {}, nullptr, Wake::kWhenAwake));
  ASSERT_OK(pair.sender->Flush());
  EXPECT_EQ(pair.a_to_b->quiet_flushes(), 2u) << "the waking message went with the last flush";
  ASSERT_EQ(ReceivePatterns(pair, 4, 50), 4);
  // Quiet messages the receiver does not read: once more than half the ring is unconsumed, flushes wake.
  const uint64_t quiet_before = pair.a_to_b->quiet_flushes(), waking_before = pair.a_to_b->flushes();
  for (int i = 0; i < 12; ++i) {
    ASSERT_OK(pair.sender->Send(7, Pattern(i, 200), {}, nullptr, Wake::kWhenAwake));
    ASSERT_OK(pair.sender->Flush());
  }
  EXPECT_GT(pair.a_to_b->quiet_flushes(), quiet_before);
  EXPECT_GT(pair.a_to_b->flushes(), waking_before) << "12 x ~220 bytes fill more than half of 4 KiB";
  EXPECT_EQ(pair.sender->stats().quiet_flushes, pair.a_to_b->quiet_flushes());
}

// A message wanted soon (kSoon) flushes quietly with its doorbell owed: WakeIfOwed rings it once, and a
// flush that wakes the receiver anyway pays it.
TEST(RingTest, AMessageWantedSoonOwesItsDoorbellUntilRungOrPaid) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimRingPair pair(TornOptions(seed));
  ASSERT_OK(pair.Start(4096));
  EXPECT_FALSE(pair.sender->WakeIfOwed()) << "nothing sent, nothing owed";
  ASSERT_OK(pair.sender->Send(7, Pattern(0, 50), {}, nullptr, Wake::kSoon));
  EXPECT_FALSE(pair.sender->wake_owed()) << "owed once flushed, not while queued";
  ASSERT_OK(pair.sender->Flush());
  EXPECT_EQ(pair.a_to_b->quiet_flushes(), 1u);
  EXPECT_EQ(pair.a_to_b->flushes(), 0u);
  EXPECT_TRUE(pair.sender->wake_owed());
  EXPECT_TRUE(pair.sender->WakeIfOwed());
  EXPECT_EQ(pair.a_to_b->wakes(), 1u);
  EXPECT_FALSE(pair.sender->wake_owed());
  EXPECT_FALSE(pair.sender->WakeIfOwed()) << "rung twice";
  EXPECT_EQ(pair.a_to_b->wakes(), 1u);
  // Owed, then a message that wakes the receiver: its flush rings for both.
  ASSERT_OK(pair.sender->Send(7, Pattern(1, 50), {}, nullptr, Wake::kSoon));
  ASSERT_OK(pair.sender->Flush());
  EXPECT_TRUE(pair.sender->wake_owed());
  ASSERT_OK(pair.sender->Send(7, Pattern(2, 50)));
  ASSERT_OK(pair.sender->Flush());
  EXPECT_EQ(pair.a_to_b->flushes(), 1u);
  EXPECT_FALSE(pair.sender->wake_owed());
  EXPECT_FALSE(pair.sender->WakeIfOwed());
  // Messages nobody waits on owe nothing.
  ASSERT_OK(pair.sender->Send(7, Pattern(3, 50), {}, nullptr, Wake::kWhenAwake));
  ASSERT_OK(pair.sender->Flush());
  EXPECT_FALSE(pair.sender->wake_owed());
  EXPECT_EQ(pair.sender->stats().owed_wakes, 2u);
  EXPECT_EQ(pair.sender->stats().owed_wakes_rung, 1u);
  EXPECT_EQ(pair.a_to_b->wakes(), 1u);
  ASSERT_EQ(ReceivePatterns(pair, 4, 50), 4);
}

TEST(RingTest, FullRingRefusesWithoutOverwritingAndRecovers) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimRingPair pair(TornOptions(seed));
  ASSERT_OK(pair.Start(4096));
  int sent = 0;
  absl::Status s;
  while ((s = pair.sender->Send(3, Pattern(sent, 100))).ok()) ++sent;
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_FALSE(pair.sender->HasRoom(100));
  EXPECT_LE(pair.sender->tail(), 4096u);
  EXPECT_EQ(sent, 4096 / static_cast<int>(RecordSpan(100)));
  ASSERT_OK(pair.sender->Flush());
  // Still full while nothing is consumed, whatever the fabric does meanwhile.
  for (int i = 0; i < 100; ++i) pair.PollWorkers();
  EXPECT_TRUE(absl::IsResourceExhausted(pair.sender->Send(3, "x")));
  EXPECT_EQ(pair.sender->stats().full, 2u);
  int got = 0;
  for (int round = 0; round < 10000 && got < sent; ++round) {
    got += static_cast<int>(pair.PollReceiver([](const RingRecord&) { return RejectReason::kNone; }));
  }
  ASSERT_EQ(got, sent);
  for (int round = 0; round < 10000 && !pair.sender->HasRoom(100); ++round) pair.PollWorkers();
  EXPECT_TRUE(pair.sender->HasRoom(100)) << "the head written back frees the ring";
  EXPECT_OK(pair.sender->Send(3, "again"));
}

TEST(RingTest, RejectsBadSends) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimRingPair pair(TornOptions(seed));
  ASSERT_OK(pair.Start(4096));
  EXPECT_TRUE(absl::IsInvalidArgument(pair.sender->Send(kPaddingType, "x")));
  EXPECT_TRUE(absl::IsInvalidArgument(pair.sender->Send(1, std::string(993, 'x'))));
  EXPECT_OK(pair.sender->Send(1, std::string(992, 'x')));
  EXPECT_OK(pair.sender->Send(1, ""));  // empty payloads are fine
}

TEST(RingTest, PartitionFailsTheSender) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimRingPair pair(TornOptions(seed));
  ASSERT_OK(pair.Start(4096));
  pair.network.Partition(1, 2);
  ASSERT_OK(pair.sender->Send(1, "lost"));
  ASSERT_OK(pair.sender->Flush());
  for (int round = 0; round < 100000 && pair.sender->health().ok(); ++round) {
    if (pair.PollWorkers() == 0) pair.network.Advance(absl::Milliseconds(1));
  }
  EXPECT_TRUE(absl::IsDeadlineExceeded(pair.sender->health())) << pair.sender->health();
  EXPECT_FALSE(pair.sender->Send(1, "more").ok());
  EXPECT_FALSE(pair.sender->Flush().ok());
}

TEST(RingTest, CrashedReceiverFailsTheSender) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimRingPair pair(TornOptions(seed));
  ASSERT_OK(pair.Start(4096));
  pair.network.Crash(2);
  ASSERT_OK(pair.sender->Send(1, "to the dead"));
  absl::Status flushed = pair.sender->Flush();
  for (int round = 0; round < 1000 && pair.sender->health().ok(); ++round) pair.PollWorkers();
  EXPECT_TRUE(absl::IsUnavailable(pair.sender->health())) << pair.sender->health() << " flush: " << flushed;
}

}  // namespace
}  // namespace fathom::msg
