// Corruption written straight into a receiver's ring memory (and its sender's credit word): each kind is
// rejected, counted under its reason and marks the ring bad per the rule in ring_receiver.h; bytes still
// in flight are not mistaken for corruption; nothing is read outside the ring (the ring ends exactly at its
// region's end, so ASan sees any overrun).
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/fabric/sim/test_seed.h"
#include "platform/msg/framing.h"
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

constexpr uint32_t kCapacity = 4096;
constexpr absl::Duration kCorruptAfter = absl::Milliseconds(1);
constexpr uint32_t kMaxRejects = 4;

class RingCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = TestSeed();
    Reset(seed_);
  }
  // A fresh pair whose simulation runs from `seed`.
  void Reset(uint64_t seed) {
    pair_.reset();
    SimOptions options;
    options.seed = seed;
    options.torn_copies = true;
    options.fabric.operation_timeout = absl::Milliseconds(100);
    pair_ = std::make_unique<SimRingPair>(options);
    RingReceiverOptions receiver;
    receiver.corrupt_after = kCorruptAfter;
    receiver.max_consecutive_rejects = kMaxRejects;
    ASSERT_OK(pair_->Start(kCapacity, 0, receiver));
  }

  RingReceiver& receiver() { return *pair_->receiver; }
  RingSender& sender() { return *pair_->sender; }
  uint64_t Rejected(RejectReason reason) { return receiver().counters().rejected_for(reason); }

  // Polls the receiver once; what it delivers goes to delivered_, rejected per `verdict`.
  size_t Poll(RejectReason verdict = RejectReason::kNone) {
    return pair_->PollReceiver([&](const RingRecord& r) {
      delivered_.emplace_back(r.payload);
      return verdict;
    });
  }
  // Sends genuine messages of `length` bytes until the next record position satisfies `stop` (checked
  // before each), and waits until all are delivered.
  void SendUntil(size_t length, const std::function<bool()>& stop) {
    const size_t before = delivered_.size();
    size_t sent = 0;
    while (!stop()) {
      ASSERT_OK(sender().Send(5, Pattern(sent, length)));
      ASSERT_OK(sender().Flush());
      ++sent;
      for (int round = 0; round < 100000 && delivered_.size() < before + sent; ++round) Poll();
      ASSERT_EQ(delivered_.size(), before + sent);
    }
    for (int round = 0; round < 100; ++round) pair_->PollWorkers();  // let head write-backs land
    ASSERT_EQ(sender().tail(), receiver().consumed());
  }
  void Warm(int messages) {
    int n = 0;
    SendUntil(100, [&] { return n++ == messages; });
  }

  // A record for the receiver's next slot (expected seq and position unless overridden).
  std::string Craft(std::string_view payload, std::optional<uint64_t> seq = std::nullopt,
                    std::optional<uint64_t> position = std::nullopt, uint16_t type = 5) {
    std::vector<std::byte> buf(RecordSpan(payload.size()));
    EncodeMessage(buf.data(), pair_->ring.session, seq.value_or(receiver().expected_seq()),
                  position.value_or(receiver().position()), type, payload);
    return std::string(AsView(buf.data(), buf.size()));
  }
  void Reseal(std::string& record) {
    const uint64_t sum = RecordChecksum(reinterpret_cast<const std::byte*>(record.data()),
                                        LoadHeader(reinterpret_cast<const std::byte*>(record.data())).covered(),
                                        pair_->ring.session);
    std::memcpy(record.data(), &sum, 8);
  }
  // Writes `bytes` (or its first `count`) at the receiver's next position, as a sender would.
  void WriteAtNext(std::string_view bytes, size_t count = std::string::npos, size_t skip = 0) {
    const uint64_t offset = receiver().geometry().OffsetOf(receiver().position());
    count = std::min(count, bytes.size());
    ASSERT_LE(offset + count, kCapacity);
    std::memcpy(pair_->ring_memory() + offset + skip, bytes.data() + skip, count - skip);
  }
  static void StoreU32(std::string& s, size_t at, uint32_t v) { std::memcpy(s.data() + at, &v, 4); }
  void PastTheBound() { pair_->network.Advance(2 * kCorruptAfter); }

  // The receiver holds the bad record for the bound, then declares it corrupt under `reason`.
  void ExpectCorruptAfterTheBound(RejectReason reason) {
    const size_t before = delivered_.size();
    for (int i = 0; i < 5; ++i) EXPECT_EQ(Poll(), 0u);
    pair_->network.Advance(kCorruptAfter / 2);
    EXPECT_EQ(Poll(), 0u);
    EXPECT_OK(receiver().health());
    EXPECT_EQ(receiver().counters().rejected_total(), 0u) << "counted before the bound";
    PastTheBound();
    EXPECT_EQ(Poll(), 0u);
    EXPECT_EQ(Rejected(reason), 1u) << receiver().counters().DebugString();
    EXPECT_EQ(receiver().counters().rejected_total(), 1u) << receiver().counters().DebugString();
    EXPECT_TRUE(absl::IsDataLoss(receiver().health())) << receiver().health();
    EXPECT_EQ(delivered_.size(), before);
    ExpectStaysBad();
  }
  void ExpectCorruptAtOnce(RejectReason reason) {
    const size_t before = delivered_.size();
    EXPECT_EQ(Poll(), 0u);
    EXPECT_EQ(Rejected(reason), 1u) << receiver().counters().DebugString();
    EXPECT_TRUE(absl::IsDataLoss(receiver().health())) << receiver().health();
    EXPECT_EQ(delivered_.size(), before);
    ExpectStaysBad();
  }
  // A bad ring delivers nothing more, even genuine records.
  void ExpectStaysBad() {
    const size_t before = delivered_.size();
    sender().Send(5, "after").IgnoreError();
    sender().Flush().IgnoreError();
    for (int i = 0; i < 100; ++i) Poll();
    EXPECT_EQ(delivered_.size(), before);
  }

  uint64_t seed_ = 0;
  std::unique_ptr<SimRingPair> pair_;
  std::vector<std::string> delivered_;
};

TEST_F(RingCorruptionTest, GenuineCraftedRecordIsDelivered) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(50);
  WriteAtNext(Craft("crafted"));
  EXPECT_EQ(Poll(), 1u);
  EXPECT_EQ(delivered_.back(), "crafted");
  EXPECT_EQ(receiver().counters().rejected_total(), 0u);
}

TEST_F(RingCorruptionTest, RecordStillBeingWrittenIsNotCorruption) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(50);
  const std::string record = Craft(Pattern(1, 300));
  // The header first, then the payload in pieces, with polls and time in between (less than the bound).
  WriteAtNext(record, kRecordHeaderSize);
  for (size_t at = kRecordHeaderSize; at < record.size(); at += 64) {
    EXPECT_EQ(Poll(), 0u);
    pair_->network.Advance(kCorruptAfter / 20);
    WriteAtNext(record, at + 64, at);
  }
  EXPECT_EQ(Poll(), 1u);
  EXPECT_EQ(delivered_.back(), Pattern(1, 300));
  // And the payload first, the header last.
  const std::string next = Craft(Pattern(2, 300));
  WriteAtNext(next, std::string::npos, kRecordHeaderSize);
  EXPECT_EQ(Poll(), 0u);
  WriteAtNext(next, kRecordHeaderSize);
  EXPECT_EQ(Poll(), 1u);
  EXPECT_EQ(receiver().counters().rejected_total(), 0u);
  EXPECT_OK(receiver().health());
}

TEST_F(RingCorruptionTest, BadChecksumIsRetriedThenCorrupt) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(50);
  std::string record = Craft(Pattern(3, 200));
  record[kRecordHeaderSize + 17] ^= 0x20;
  WriteAtNext(record);
  ExpectCorruptAfterTheBound(RejectReason::kBadChecksum);
}

TEST_F(RingCorruptionTest, FlippedHeaderByteIsRetriedThenCorrupt) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(50);
  std::string record = Craft(Pattern(3, 40));
  record[29] ^= 0x01;  // the type
  WriteAtNext(record);
  ExpectCorruptAfterTheBound(RejectReason::kBadChecksum);
}

TEST_F(RingCorruptionTest, TruncatedRecordIsCorrupt) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(50);
  // The header promises 500 bytes; only half of them ever arrive.
  WriteAtNext(Craft(Pattern(4, 500)), kRecordHeaderSize + 250);
  ExpectCorruptAfterTheBound(RejectReason::kBadChecksum);
}

TEST_F(RingCorruptionTest, LengthLargerThanTheRingIsCorrupt) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(50);
  std::string record = Craft(Pattern(5, 100));
  StoreU32(record, 24, 0xFFFFFFF0u);
  WriteAtNext(record);
  ExpectCorruptAfterTheBound(RejectReason::kBadLength);
}

TEST_F(RingCorruptionTest, LengthOverMaxPayloadWithValidChecksumIsCorrupt) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(3);
  const uint32_t too_long = receiver().geometry().max_payload() + 8;
  std::string record = Craft(Pattern(6, too_long));  // fits before the ring's end, checksum is right
  ASSERT_LE(receiver().geometry().OffsetOf(receiver().position()) + record.size(), kCapacity);
  WriteAtNext(record);
  ExpectCorruptAfterTheBound(RejectReason::kBadLength);
}

TEST_F(RingCorruptionTest, RecordStraddlingTheRingEndIsCorrupt) {
  SCOPED_TRACE(SeedTrace(seed_));
  SendUntil(100, [&] { return receiver().geometry().RoomBeforeEnd(receiver().position()) < 200; });
  const uint64_t room = receiver().geometry().RoomBeforeEnd(receiver().position());
  ASSERT_GE(room, kRecordHeaderSize);
  std::string record = Craft(Pattern(7, 300));  // longer than the room: the sender would have wrapped
  WriteAtNext(record, room);
  ExpectCorruptAfterTheBound(RejectReason::kBadLength);
}

TEST_F(RingCorruptionTest, PaddingWithAWrongLengthIsCorrupt) {
  SCOPED_TRACE(SeedTrace(seed_));
  SendUntil(100, [&] { return receiver().geometry().RoomBeforeEnd(receiver().position()) < 200; });
  const uint64_t room = receiver().geometry().RoomBeforeEnd(receiver().position());
  std::vector<std::byte> padding(kRecordHeaderSize);
  EncodePadding(padding.data(), pair_->ring.session, receiver().expected_seq(), receiver().position(), room - 8);
  WriteAtNext(AsView(padding.data(), padding.size()));
  ExpectCorruptAfterTheBound(RejectReason::kBadLength);
}

TEST_F(RingCorruptionTest, GenuinePaddingWraps) {
  SCOPED_TRACE(SeedTrace(seed_));
  SendUntil(100, [&] { return receiver().geometry().RoomBeforeEnd(receiver().position()) < 200; });
  const uint64_t room = receiver().geometry().RoomBeforeEnd(receiver().position());
  const uint64_t lap_end = receiver().position() + room;
  const size_t before = delivered_.size();
  ASSERT_OK(sender().Send(5, Pattern(8, 300)));
  ASSERT_OK(sender().Flush());
  for (int round = 0; round < 10000 && delivered_.size() == before; ++round) Poll();
  ASSERT_EQ(delivered_.back(), Pattern(8, 300));
  EXPECT_EQ(receiver().position(), lap_end + RecordSpan(300));
}

TEST_F(RingCorruptionTest, ReservedBitsAreCorrupt) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(10);
  std::string record = Craft(Pattern(9, 64));
  record[31] = 0x40;
  Reseal(record);
  WriteAtNext(record);
  ExpectCorruptAfterTheBound(RejectReason::kBadHeader);
}

TEST_F(RingCorruptionTest, StaleSequenceIsCorruptAtOnce) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(50);
  WriteAtNext(Craft("stale", receiver().expected_seq() - 1));
  ExpectCorruptAtOnce(RejectReason::kBadSequence);
}

TEST_F(RingCorruptionTest, SkippedSequenceIsCorruptAtOnce) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(50);
  WriteAtNext(Craft("skipped", receiver().expected_seq() + 1));
  ExpectCorruptAtOnce(RejectReason::kBadSequence);
}

TEST_F(RingCorruptionTest, MisplacedRecordIsCorruptAtOnce) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(50);
  WriteAtNext(Craft("misplaced", std::nullopt, receiver().position() + 8));
  ExpectCorruptAtOnce(RejectReason::kBadSequence);
}

TEST_F(RingCorruptionTest, OldLapRecordIsOnlyOldBytes) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(100);  // more than a lap
  ASSERT_GT(receiver().position(), kCapacity);
  // What an earlier lap may have left here: a record that started at this spot a lap ago.
  WriteAtNext(Craft("old", receiver().expected_seq() - 40, receiver().position() - kCapacity));
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(Poll(), 0u);
  PastTheBound();
  EXPECT_EQ(Poll(), 0u);
  EXPECT_EQ(receiver().counters().rejected_total(), 0u);
  EXPECT_OK(receiver().health());
  ASSERT_OK(sender().Send(5, "new"));
  ASSERT_OK(sender().Flush());
  for (int round = 0; round < 10000 && delivered_.back() != "new"; ++round) Poll();
  EXPECT_EQ(delivered_.back(), "new");
}

TEST_F(RingCorruptionTest, IdleRingFullOfOldPayloadIsQuiet) {
  SCOPED_TRACE(SeedTrace(seed_));
  // Laps of random payloads leave arbitrary bytes everywhere; an idle receiver polls them calmly.
  int n = 0;
  SendUntil(333, [&] { return n++ == 40; });
  for (int i = 0; i < 5000; ++i) {
    EXPECT_EQ(Poll(), 0u);
    if (i % 100 == 0) PastTheBound();
  }
  EXPECT_EQ(receiver().counters().rejected_total(), 0u);
  EXPECT_OK(receiver().health());
}

TEST_F(RingCorruptionTest, ConsecutiveMessageRejectsMarkTheRingBad) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(5);
  for (uint32_t i = 0; i + 1 < kMaxRejects; ++i) {
    WriteAtNext(Craft("unknown"));
    EXPECT_EQ(Poll(RejectReason::kUnknownType), 1u);
  }
  EXPECT_EQ(Rejected(RejectReason::kUnknownType), kMaxRejects - 1);
  EXPECT_OK(receiver().health());
  WriteAtNext(Craft("fine"));  // an accepted message resets the run
  EXPECT_EQ(Poll(), 1u);
  for (uint32_t i = 0; i < kMaxRejects; ++i) {
    WriteAtNext(Craft("bad payload"));
    Poll(RejectReason::kBadPayload);
  }
  EXPECT_EQ(Rejected(RejectReason::kBadPayload), kMaxRejects);
  EXPECT_TRUE(absl::IsDataLoss(receiver().health())) << receiver().health();
  ExpectStaysBad();
}

TEST_F(RingCorruptionTest, CorruptCreditMarksTheSenderBad) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(5);
  // A torn or garbage credit is ignored.
  std::memset(pair_->credit_memory(), 0xAB, kCreditRecordSize);
  while (sender().Send(5, Pattern(0, 100)).ok()) {}
  EXPECT_OK(sender().health());
  // A well-formed credit naming bytes never written is corruption.
  EncodeCredit(pair_->credit_memory(), pair_->ring.session, sender().flushed() + 4096);
  EXPECT_FALSE(sender().Send(5, "x").ok());
  EXPECT_TRUE(absl::IsDataLoss(sender().health())) << sender().health();
  EXPECT_EQ(sender().stats().bad_credits, 1u);
}

TEST_F(RingCorruptionTest, CreditMovingBackwardsMarksTheSenderBad) {
  SCOPED_TRACE(SeedTrace(seed_));
  Warm(60);  // more than half a ring: the receiver has written a head back
  ASSERT_GT(sender().credited(), 0u);
  EncodeCredit(pair_->credit_memory(), pair_->ring.session, sender().credited() - 8);
  while (sender().Send(5, Pattern(0, 100)).ok()) {}
  EXPECT_TRUE(absl::IsDataLoss(sender().health())) << sender().health();
}

// Random bytes land anywhere in the ring while genuine traffic flows: whatever is delivered is exactly a
// prefix of what was sent, nothing else; the ring either stays healthy or is marked bad; nothing crashes.
TEST_F(RingCorruptionTest, RandomCorruptionNeverDeliversAnythingUnsent) {
  SCOPED_TRACE(SeedTrace(seed_));
  std::mt19937_64 rng(seed_);
  int bad_trials = 0;
  for (int trial = 0; trial < 20; ++trial) {
    Reset(seed_ + trial);
    std::vector<std::string> sent;
    size_t checked = 0;
    for (int step = 0; step < 3000 && receiver().health().ok(); ++step) {
      const size_t length = 1 + rng() % 400;
      if (sender().Send(5, Pattern(sent.size() + 1000 * trial, length)).ok()) {
        sent.push_back(Pattern(sent.size() + 1000 * trial, length));
      }
      sender().Flush().IgnoreError();
      pair_->PollWorkers();  // bytes land
      if (rng() % 100 == 0) {  // scribble
        const size_t at = rng() % kCapacity;
        const size_t n = std::min<size_t>(1 + rng() % 64, kCapacity - at);
        for (size_t i = 0; i < n; ++i) pair_->ring_memory()[at + i] = std::byte(rng());
      }
      if (rng() % 50 == 0) pair_->network.Advance(kCorruptAfter);
      if (rng() % 4 == 0) Poll();  // the receiver lags, so unconsumed bytes are there to be hit
      ASSERT_LE(delivered_.size(), sent.size());
      for (; checked < delivered_.size(); ++checked) ASSERT_EQ(delivered_[checked], sent[checked]) << checked;
    }
    if (!receiver().health().ok()) {
      ++bad_trials;
      EXPECT_EQ(receiver().counters().rejected_total(), 1u) << receiver().counters().DebugString();
    }
    delivered_.clear();
  }
  EXPECT_GT(bad_trials, 0) << "no scribble ever hit unconsumed bytes";
}

}  // namespace
}  // namespace fathom::msg
