// Reads, writes and calls as messages (UcxOptions::RemoteAccess): over tcp the target serves them from
// its progress, only inside regions it has registered (calls with the handlers it set), and many posted
// before one Poll complete together.
// The target's worker runs on a thread of its own, as a node thread does (but in the replies tests).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/fabric/racy_copy.h"
#include "platform/fabric/ucx/ucx_fabric.h"

namespace fathom::fabric {
namespace {

class UcxMessagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    UcxOptions options;
    options.transports = "tcp";
    options.fabric.operation_timeout = absl::Seconds(20);
    auto fabric = CreateUcxFabric(options);
    ASSERT_TRUE(fabric.ok()) << fabric.status();
    fabric_ = std::move(*fabric);
    auto region = fabric_->AllocateRegion(1 << 20);
    ASSERT_TRUE(region.ok()) << region.status();
    region_ = std::move(*region);
    for (size_t i = 0; i < region_->size(); ++i) region_->data()[i] = std::byte(i * 7);
    auto target = fabric_->CreateWorker();
    auto requester = fabric_->CreateWorker();
    ASSERT_TRUE(target.ok() && requester.ok());
    target_ = std::move(*target);
    requester_ = std::move(*requester);
    auto endpoint = requester_->Connect(target_->address());
    ASSERT_TRUE(endpoint.ok()) << endpoint.status();
    endpoint_ = std::move(*endpoint);
    auto remote = endpoint_->ImportRegion(region_->descriptor());
    ASSERT_TRUE(remote.ok()) << remote.status();
    remote_ = *remote;
    // Calls: 2 answers its argument reversed, 3 answers 100 bytes whatever the caller's room. Set before
    // the target's thread starts: a worker belongs to one thread.
    ASSERT_TRUE(target_
                    ->SetCallHandler(2, [](absl::Span<const std::byte> argument, size_t, std::string& reply) {
                      reply.assign(reinterpret_cast<const char*>(argument.data()), argument.size());
                      std::reverse(reply.begin(), reply.end());
                    })
                    .ok());
    ASSERT_TRUE(
        target_->SetCallHandler(3, [](absl::Span<const std::byte>, size_t, std::string& reply) { reply.assign(100, 'x'); })
            .ok());
    EXPECT_TRUE(absl::IsInvalidArgument(target_->SetCallHandler(Worker::kMaxCallHandlers, nullptr)));
    if (TargetOnItsOwnThread()) StartServing();
  }

  void TearDown() override {
    endpoint_.reset();
    back_.reset();  // the target's: not yet serving on a thread of its own if there is one
    // The requester's endpoint closes with the target serving (a graceful close needs the peer).
    if (!serving_.joinable()) StartServing();
    requester_.reset();
    stop_.store(true);
    target_->Signal();
    serving_.join();
    target_.reset();
  }

  // False: the test drives both workers on its own thread.
  virtual bool TargetOnItsOwnThread() const { return true; }

  void StartServing() {
    serving_ = std::thread([this] {
      Worker* target = target_.get();
      while (!stop_.load()) target->Wait(absl::Milliseconds(20));
    });
  }

  // Polls the requester until `count` completions arrive.
  std::vector<Completion> Pump(size_t count) {
    std::vector<Completion> done;
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    Completion batch[64];
    while (done.size() < count && absl::Now() < deadline) {
      size_t n = requester_->Poll(batch);
      done.insert(done.end(), batch, batch + n);
      if (n == 0) requester_->Wait(absl::Milliseconds(20));
    }
    return done;
  }

  // The region's bytes as this thread sees them (the target's thread writes them, unsynchronized).
  std::vector<std::byte> Snapshot(size_t offset, size_t length) {
    std::vector<std::byte> copy(length);
    RacyCopy(copy.data(), region_->data() + offset, length, /*to_is_shared=*/false);
    return copy;
  }

  std::unique_ptr<Fabric> fabric_;
  std::unique_ptr<Region> region_;
  std::unique_ptr<Worker> target_;
  std::unique_ptr<Worker> requester_;
  std::unique_ptr<Endpoint> endpoint_;
  std::unique_ptr<Endpoint> back_;  // the target's own endpoint to the requester, when a test makes one
  RemoteRegion remote_;
  std::atomic<bool> stop_{false};
  std::thread serving_;
};

TEST_F(UcxMessagesTest, ManyReadsAndWritesPostedBeforeOnePollAllComplete) {
  constexpr int kOps = 300;  // more than one batch of 64 KiB
  std::vector<std::vector<std::byte>> reads(kOps, std::vector<std::byte>(2048));
  std::vector<std::byte> payload(1000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = std::byte(255 - i % 256);
  for (int i = 0; i < kOps; ++i) {
    ASSERT_TRUE(endpoint_->PostRead(remote_, i * 2048, reads[i].data(), 2048, i).ok());
    ASSERT_TRUE(endpoint_->PostWrite(remote_, 700000 + i * 1000, payload.data(), 1000, 1000 + i).ok());
  }
  ASSERT_TRUE(endpoint_->Flush().ok());
  EXPECT_EQ(requester_->outstanding(), 2u * kOps);
  std::vector<Completion> done = Pump(2 * kOps);
  ASSERT_EQ(done.size(), 2u * kOps);
  std::vector<bool> seen(2 * kOps);
  for (const Completion& c : done) {
    ASSERT_TRUE(c.status.ok()) << c.status;
    const size_t index = c.context >= 1000 ? kOps + c.context - 1000 : c.context;
    ASSERT_LT(index, seen.size());
    EXPECT_FALSE(seen[index]);
    seen[index] = true;
    EXPECT_EQ(c.type, c.context >= 1000 ? OpType::kWrite : OpType::kRead);
  }
  for (int i = 0; i < kOps; ++i) {
    ASSERT_EQ(reads[i], Snapshot(i * 2048, 2048)) << i;
    ASSERT_EQ(Snapshot(700000 + i * 1000, 1000), payload) << i;
  }
  EXPECT_EQ(requester_->outstanding(), 0u);
}

// A peer that lies about a region (its descriptor names bytes the target never registered) reads and
// writes nothing: those operations fail alone with NotFound and the connection stays usable.
TEST_F(UcxMessagesTest, BytesOutsideEveryRegisteredRegionAreNotFound) {
  RegionDescriptor lie = region_->descriptor();
  lie.base += region_->size();  // the bytes just past the region
  auto outside = endpoint_->ImportRegion(lie);
  ASSERT_TRUE(outside.ok()) << outside.status();
  std::vector<std::byte> buffer(64, std::byte{0x5a});
  ASSERT_TRUE(endpoint_->PostRead(*outside, 0, buffer.data(), 64, 1).ok());
  const char secret[] = "not yours";
  ASSERT_TRUE(endpoint_->PostWrite(*outside, 64, secret, sizeof secret, 2).ok());
  ASSERT_TRUE(endpoint_->Flush().ok());
  std::vector<Completion> done = Pump(2);
  ASSERT_EQ(done.size(), 2u);
  for (const Completion& c : done) EXPECT_TRUE(absl::IsNotFound(c.status)) << c.status;
  EXPECT_EQ(buffer[0], std::byte{0x5a}) << "a failed read left its buffer alone";
  EXPECT_TRUE(endpoint_->health().ok()) << endpoint_->health();

  std::vector<std::byte> good(64);
  ASSERT_TRUE(endpoint_->PostRead(remote_, 4096, good.data(), 64, 3).ok());
  ASSERT_TRUE(endpoint_->Flush().ok());
  done = Pump(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].status.ok()) << done[0].status;
  EXPECT_EQ(good, Snapshot(4096, 64));
}

TEST_F(UcxMessagesTest, ARegionDeregisteredAtTheTargetIsNotFound) {
  std::vector<std::byte> buffer(64);
  region_.reset();
  ASSERT_TRUE(endpoint_->PostRead(remote_, 0, buffer.data(), 64, 1).ok());
  ASSERT_TRUE(endpoint_->Flush().ok());
  std::vector<Completion> done = Pump(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(absl::IsNotFound(done[0].status)) << done[0].status;
  EXPECT_TRUE(endpoint_->health().ok());
}

// Over 32 KiB a read goes through UCX's own get; it still completes beside message reads.
TEST_F(UcxMessagesTest, LongReadsUseUcxAndCompleteBesideMessages) {
  std::vector<std::byte> big(100000), small(16);
  ASSERT_TRUE(endpoint_->PostRead(remote_, 0, big.data(), big.size(), 1).ok());
  ASSERT_TRUE(endpoint_->PostRead(remote_, 200000, small.data(), small.size(), 2).ok());
  ASSERT_TRUE(endpoint_->Flush().ok());
  std::vector<Completion> done = Pump(2);
  ASSERT_EQ(done.size(), 2u);
  for (const Completion& c : done) EXPECT_TRUE(c.status.ok()) << c.status;
  EXPECT_EQ(big, Snapshot(0, big.size()));
  EXPECT_EQ(small, Snapshot(200000, small.size()));
}

// Calls travel in the batches reads do and come back with the handler's reply; a call the target does not
// serve fails alone (Unimplemented) and the connection stays usable.
TEST_F(UcxMessagesTest, CallsAreAnsweredByTheTargetsHandlerInTheReadBatches) {
  // Over tcp the target's CPU serves reads: asking it is worth a look (kv's GET at the owner).
  EXPECT_TRUE(requester_->ReadsMayBeServedByPeers());
  EXPECT_TRUE(endpoint_->ReadsServedByPeer(remote_));
  constexpr int kCalls = 200;  // with the reads, more than one batch
  std::vector<std::string> arguments(kCalls);
  std::vector<std::vector<char>> replies(kCalls, std::vector<char>(64, '?'));
  std::vector<std::vector<std::byte>> reads(kCalls, std::vector<std::byte>(512));
  for (int i = 0; i < kCalls; ++i) {
    arguments[i] = "call number " + std::to_string(i);
    ASSERT_TRUE(endpoint_
                    ->PostCall(2, absl::MakeConstSpan(reinterpret_cast<const std::byte*>(arguments[i].data()),
                                                      arguments[i].size()),
                               replies[i].data(), replies[i].size(), i)
                    .ok());
    ASSERT_TRUE(endpoint_->PostRead(remote_, i * 512, reads[i].data(), 512, 1000 + i).ok());
  }
  ASSERT_TRUE(endpoint_->Flush().ok());
  std::vector<Completion> done = Pump(2 * kCalls);
  ASSERT_EQ(done.size(), 2u * kCalls);
  for (const Completion& c : done) {
    ASSERT_TRUE(c.status.ok()) << c.status;
    if (c.context >= 1000) {
      EXPECT_EQ(c.type, OpType::kRead);
      continue;
    }
    EXPECT_EQ(c.type, OpType::kCall);
    const std::string& argument = arguments[c.context];
    ASSERT_EQ(c.bytes, argument.size());
    EXPECT_EQ(std::string(replies[c.context].data(), c.bytes), std::string(argument.rbegin(), argument.rend()));
    EXPECT_EQ(replies[c.context][c.bytes], '?') << "nothing past the reply was written";
  }
  for (int i = 0; i < kCalls; ++i) ASSERT_EQ(reads[i], Snapshot(i * 512, 512)) << i;

  const std::byte one[1] = {std::byte{1}};
  std::vector<char> room(10);
  ASSERT_TRUE(endpoint_->PostCall(5, one, room.data(), room.size(), 1).ok());  // no handler 5
  ASSERT_TRUE(endpoint_->PostCall(3, one, room.data(), room.size(), 2).ok());  // 100 bytes into 10
  ASSERT_TRUE(endpoint_->Flush().ok());
  done = Pump(2);
  ASSERT_EQ(done.size(), 2u);
  for (const Completion& c : done) EXPECT_TRUE(absl::IsUnimplemented(c.status)) << c.status;
  EXPECT_TRUE(endpoint_->health().ok()) << endpoint_->health();

  EXPECT_TRUE(absl::IsInvalidArgument(endpoint_->PostCall(Worker::kMaxCallHandlers, one, room.data(), 10, 3)));
  EXPECT_TRUE(absl::IsInvalidArgument(endpoint_->PostCall(2, {}, room.data(), 10, 3)));
  EXPECT_TRUE(absl::IsInvalidArgument(endpoint_->PostCall(2, one, room.data(), 0, 3)));
  EXPECT_TRUE(absl::IsInvalidArgument(endpoint_->PostCall(2, one, room.data(), 32769, 3)));
  ASSERT_TRUE(endpoint_->PostCall(2, one, room.data(), room.size(), 4).ok());
  ASSERT_TRUE(endpoint_->Flush().ok());
  done = Pump(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].status.ok()) << done[0].status;
  EXPECT_EQ(done[0].bytes, 1u);
}

TEST(UcxRemoteAccessTest, ParsesItsFlagValues) {
  EXPECT_EQ(*ParseRemoteAccess("auto"), UcxOptions::RemoteAccess::kAuto);
  EXPECT_EQ(*ParseRemoteAccess("messages"), UcxOptions::RemoteAccess::kMessages);
  EXPECT_EQ(*ParseRemoteAccess("one_sided"), UcxOptions::RemoteAccess::kOneSided);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseRemoteAccess("rdma").status()));
}

// Replies (docs/formats/fabric.md): when the target has an endpoint of its own to the requester, as every
// node of a cluster does, its replies to the batches it served gather until its next Poll or Wait and go
// as one message, inside the request batch it sends that peer then if there is one; else each batch gets
// its own reply at once. Both workers run on the test's thread.
class UcxRepliesTest : public UcxMessagesTest {
 protected:
  bool TargetOnItsOwnThread() const override { return false; }

  // Sends two batches of one read each (two Polls of the requester), then polls the target until it has
  // served both and the reads completed; returns how many messages the target answered them with. Checks
  // the reads' bytes.
  uint64_t TwoBatchesServed(uint64_t round) {
    std::byte first[64];
    std::byte second[64];
    const uint64_t at = (round * 128) % (region_->size() - 128);
    Completion done[4];
    const MessageCounts sent_before = requester_->message_counts();
    EXPECT_TRUE(endpoint_->PostRead(remote_, at, first, sizeof first, 2 * round).ok());
    EXPECT_TRUE(endpoint_->Flush().ok());
    EXPECT_EQ(requester_->Poll(done), 0u);  // sends the first batch
    EXPECT_TRUE(endpoint_->PostRead(remote_, at + 64, second, sizeof second, 2 * round + 1).ok());
    EXPECT_TRUE(endpoint_->Flush().ok());
    EXPECT_EQ(requester_->Poll(done), 0u);  // and the second
    EXPECT_EQ(requester_->message_counts().batches_sent, sent_before.batches_sent + 2);
    EXPECT_EQ(requester_->message_counts().records_sent, sent_before.records_sent + 2);
    const MessageCounts before = target_->message_counts();
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    size_t completed = 0;
    auto collect = [&] {
      for (size_t i = 0, n = requester_->Poll(done); i < n; ++i) {
        EXPECT_TRUE(done[i].status.ok()) << done[i].status;
        EXPECT_EQ(done[i].context / 2, round);
        ++completed;
      }
    };
    // The requester progresses too: UCX may still hold a send (a connection being set up).
    while (target_->message_counts().batches_served < before.batches_served + 2 && absl::Now() < deadline) {
      target_->Poll(done);
      collect();
    }
    EXPECT_EQ(target_->message_counts().batches_served, before.batches_served + 2);
    while (completed < 2 && absl::Now() < deadline) {
      target_->Poll(done);  // the first after serving sends the gathered replies
      collect();
    }
    const MessageCounts after = target_->message_counts();
    EXPECT_EQ(after.batches_served, before.batches_served + 2);
    EXPECT_EQ(after.replies_with_requests, before.replies_with_requests);  // the target sent no batch
    EXPECT_EQ(completed, 2u);
    EXPECT_EQ(std::memcmp(first, region_->data() + at, sizeof first), 0);
    EXPECT_EQ(std::memcmp(second, region_->data() + at + 64, sizeof second), 0);
    return after.replies_sent - before.replies_sent;
  }

  void ConnectBack() {
    auto back = target_->Connect(requester_->address());
    ASSERT_TRUE(back.ok()) << back.status();
    back_ = std::move(*back);
  }
};

TEST_F(UcxRepliesTest, BatchesOfOnePeerServedInOneProgressShareOneReply) {
  ConnectBack();
  // Whether both batches are in the target's socket by its first progress is up to the kernel; on loopback
  // they nearly always are. Without shared replies every round would send two.
  bool shared = false;
  for (uint64_t round = 0; round < 200 && !shared && !HasFailure(); ++round) {
    const uint64_t replies = TwoBatchesServed(round);
    EXPECT_GE(replies, 1u);
    EXPECT_LE(replies, 2u);
    shared = replies == 1;
  }
  EXPECT_TRUE(shared) << "every pair of batches got two reply messages";
}

TEST_F(UcxRepliesTest, WithoutAnEndpointToThePeerEachBatchGetsItsOwnReply) {
  for (uint64_t round = 0; round < 20 && !HasFailure(); ++round) EXPECT_EQ(TwoBatchesServed(round), 2u);
}

TEST_F(UcxRepliesTest, RepliesRideInTheRequestBatchToTheSamePeer) {
  ConnectBack();
  auto mirror = back_->ImportRegion(region_->descriptor());  // the target reads the region as a peer's
  ASSERT_TRUE(mirror.ok()) << mirror.status();
  Completion done[4];
  for (uint64_t round = 0; round < 20 && !HasFailure(); ++round) {
    const uint64_t at = round * 256;
    std::byte asked[100];
    std::byte back_read[100];
    ASSERT_TRUE(endpoint_->PostRead(remote_, at, asked, sizeof asked, round).ok());
    ASSERT_TRUE(endpoint_->Flush().ok());
    EXPECT_EQ(requester_->Poll(done), 0u);
    const MessageCounts before = target_->message_counts();
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (target_->message_counts().batches_served == before.batches_served && absl::Now() < deadline) {
      target_->Poll(done);
      requester_->Poll(absl::Span<Completion>());  // a connection being set up needs both sides
    }
    // The reply waits; the target's own read to the requester takes it along.
    ASSERT_TRUE(back_->PostRead(*mirror, at + 100, back_read, sizeof back_read, 1000 + round).ok());
    ASSERT_TRUE(back_->Flush().ok());
    size_t requester_done = 0, target_done = 0;
    while ((requester_done < 1 || target_done < 1) && absl::Now() < deadline) {
      for (size_t i = 0, n = target_->Poll(done); i < n; ++i) {
        EXPECT_TRUE(done[i].status.ok()) << done[i].status;
        EXPECT_EQ(done[i].context, 1000 + round);
        ++target_done;
      }
      for (size_t i = 0, n = requester_->Poll(done); i < n; ++i) {
        EXPECT_TRUE(done[i].status.ok()) << done[i].status;
        EXPECT_EQ(done[i].context, round);
        ++requester_done;
      }
    }
    ASSERT_EQ(requester_done, 1u);
    ASSERT_EQ(target_done, 1u);
    const MessageCounts after = target_->message_counts();
    EXPECT_EQ(after.batches_sent, before.batches_sent + 1);  // its read, with the reply riding along
    EXPECT_EQ(after.records_sent, before.records_sent + 1);
    EXPECT_EQ(after.replies_with_requests, before.replies_with_requests + 1);
    EXPECT_EQ(after.replies_sent, before.replies_sent);
    EXPECT_EQ(std::memcmp(asked, region_->data() + at, sizeof asked), 0);
    EXPECT_EQ(std::memcmp(back_read, region_->data() + at + 100, sizeof back_read), 0);
  }
}

}  // namespace
}  // namespace fathom::fabric
