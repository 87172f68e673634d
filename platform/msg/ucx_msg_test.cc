// The msg layer over real UCX shared memory: two threads of this process, each with its own worker and
// Messenger, flood each other with one-way messages and calls at once (rings wrap, fill up and drain).
#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "platform/msg/messenger.h"
#include "platform/msg/test_util.h"
#include "platform/msg/ucx_pair.h"

namespace fathom::msg {
namespace {

using testing::Pattern;
using testing::UcxMsgPair;

constexpr MessageType kEcho = 1;
constexpr MessageType kNote = 2;

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kNotes = 20'000;
constexpr uint64_t kCalls = 4'000;
#else
constexpr uint64_t kNotes = 200'000;
constexpr uint64_t kCalls = 40'000;
#endif

struct SideResult {
  uint64_t notes_got = 0;
  uint64_t notes_bad = 0;
  uint64_t replies = 0;
  uint64_t replies_bad = 0;
  uint64_t refused = 0;
  std::string error;
};

// One side: sends kNotes one-way messages and kCalls echo calls to the peer while serving the peer's.
void RunSide(UcxMsgPair& pair, NodeId self, std::atomic<int>& finished, SideResult& result) {
  Messenger& m = pair.messenger(self);
  fabric::Worker& worker = pair.worker(self);
  const NodeId peer = 3 - self;
  uint64_t notes_sent = 0, calls_made = 0;
  bool counted_finished = false;
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while (finished.load() < 2) {
    if (absl::Now() > give_up) {
      result.error = "timed out";
      finished.fetch_add(counted_finished ? 0 : 1);
      return;
    }
    for (int burst = 0; burst < 16; ++burst) {
      absl::Status s;
      if (notes_sent < kNotes && (calls_made >= kCalls || notes_sent % 5 != 0)) {
        std::string note(8, '\0');
        std::memcpy(note.data(), &notes_sent, 8);
        note += Pattern(notes_sent + self * 1'000'000'000ull, notes_sent % 200);
        s = m.Send(peer, kNote, note);
        if (s.ok()) ++notes_sent;
      } else if (calls_made < kCalls) {
        const uint64_t key = calls_made + self * 1'000'000'000ull;
        const size_t length = calls_made % 500;
        s = m.Call(peer, kEcho, Pattern(key, length), absl::Seconds(60),
                   [&result, key, length](absl::StatusOr<std::string_view> r) {
                     ++result.replies;
                     if (!r.ok() || *r != Pattern(key, length)) ++result.replies_bad;
                   });
        if (s.ok()) ++calls_made;
      } else {
        break;
      }
      if (absl::IsResourceExhausted(s)) {
        ++result.refused;
        break;
      }
      if (!s.ok()) {
        result.error = s.ToString();
        finished.fetch_add(counted_finished ? 0 : 1);
        return;
      }
    }
    PollWorkerAndMessenger(worker, m);
    if (!counted_finished && notes_sent == kNotes && result.replies == kCalls && result.notes_got == kNotes) {
      counted_finished = true;
      finished.fetch_add(1);
    }
  }
}

TEST(UcxMsgTest, TwoThreadsFloodEachOtherOverSharedMemory) {
  absl::StatusOr<std::unique_ptr<UcxMsgPair>> pair = UcxMsgPair::Create("sm", 16 << 10);
  ASSERT_TRUE(pair.ok()) << pair.status();
  SideResult results[2];
  for (NodeId self : {1u, 2u}) {
    SideResult& r = results[self - 1];
    ASSERT_TRUE((*pair)->messenger(self).Register(kEcho, [](const Message& msg, std::string* reply) {
      reply->assign(msg.payload);
      return absl::OkStatus();
    }).ok());
    ASSERT_TRUE((*pair)->messenger(self).Register(kNote, [&r, self](const Message& msg, std::string*) {
      uint64_t seq;
      std::memcpy(&seq, msg.payload.data(), 8);
      const NodeId sender = 3 - self;
      if (seq != r.notes_got || msg.payload.substr(8) != Pattern(seq + sender * 1'000'000'000ull, seq % 200)) {
        ++r.notes_bad;
      }
      ++r.notes_got;
      return absl::OkStatus();
    }).ok());
  }
  std::atomic<int> finished{0};
  std::thread other([&] { RunSide(**pair, 2, finished, results[1]); });
  RunSide(**pair, 1, finished, results[0]);
  other.join();
  for (NodeId self : {1u, 2u}) {
    const SideResult& r = results[self - 1];
    SCOPED_TRACE(absl::StrCat("node ", self));
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.notes_got, kNotes);
    EXPECT_EQ(r.notes_bad, 0u);
    EXPECT_EQ(r.replies, kCalls);
    EXPECT_EQ(r.replies_bad, 0u);
    EXPECT_EQ((*pair)->messenger(self).counters().rejected_total(), 0u);
    EXPECT_EQ((*pair)->messenger(self).pending_calls(), 0u);
    EXPECT_TRUE((*pair)->messenger(self).peer_health(3 - self).ok());
    EXPECT_GT((*pair)->messenger(self).receive_ring(0)->credit_writes(), 10u);
  }
}

}  // namespace
}  // namespace fathom::msg
