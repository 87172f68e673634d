// Replies over tcp (docs/formats/fabric.md): when the target has an endpoint of its own to the requester,
// as every node of a cluster does, its replies to the batches it served gather until its next Poll or Wait
// and go as one message, inside the request batch it sends that peer then if there is one; else each batch
// gets its own reply at once. Both workers run on the test's thread.
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/fabric/ucx/ucx_fabric.h"

namespace fathom::fabric {
namespace {

class UcxRepliesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    UcxOptions options;
    options.transports = "tcp";
    options.fabric.operation_timeout = absl::Seconds(30);
    auto fabric = CreateUcxFabric(options);
    ASSERT_TRUE(fabric.ok()) << fabric.status();
    fabric_ = std::move(*fabric);
    auto region = fabric_->AllocateRegion(1 << 16);
    ASSERT_TRUE(region.ok()) << region.status();
    region_ = std::move(*region);
    for (size_t i = 0; i < region_->size(); ++i) region_->data()[i] = std::byte(i * 13);
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
  }

  void TearDown() override {
    endpoint_.reset();
    back_.reset();
    // The requester's close completes with the target progressing (a graceful close needs the peer).
    std::atomic<bool> stop{false};
    std::thread serving([&] {
      while (!stop.load()) target_->Wait(absl::Milliseconds(20));
    });
    requester_.reset();
    stop.store(true);
    target_->Signal();
    serving.join();
    target_.reset();
  }

  // Sends two batches of one read each (two Polls of the requester), then polls the target until it has
  // served both and the reads completed; returns how many messages the target answered them with. Checks
  // the reads' bytes.
  uint64_t TwoBatchesServed(uint64_t round) {
    std::byte first[64];
    std::byte second[64];
    const uint64_t at = (round * 128) % (region_->size() - 128);
    Completion done[4];
    EXPECT_TRUE(endpoint_->PostRead(remote_, at, first, sizeof first, 2 * round).ok());
    EXPECT_TRUE(endpoint_->Flush().ok());
    EXPECT_EQ(requester_->Poll(done), 0u);  // sends the first batch
    EXPECT_TRUE(endpoint_->PostRead(remote_, at + 64, second, sizeof second, 2 * round + 1).ok());
    EXPECT_TRUE(endpoint_->Flush().ok());
    EXPECT_EQ(requester_->Poll(done), 0u);  // and the second
    const UcxMessageCounts before = MessageCountsOf(*target_);
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
    while (MessageCountsOf(*target_).batches_served < before.batches_served + 2 && absl::Now() < deadline) {
      target_->Poll(done);
      collect();
    }
    EXPECT_EQ(MessageCountsOf(*target_).batches_served, before.batches_served + 2);
    while (completed < 2 && absl::Now() < deadline) {
      target_->Poll(done);  // the first after serving sends the gathered replies
      collect();
    }
    const UcxMessageCounts after = MessageCountsOf(*target_);
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

  std::unique_ptr<Fabric> fabric_;
  std::unique_ptr<Region> region_;
  std::unique_ptr<Worker> target_;
  std::unique_ptr<Worker> requester_;
  std::unique_ptr<Endpoint> endpoint_;
  std::unique_ptr<Endpoint> back_;  // the target's own endpoint to the requester, when the test makes one
  RemoteRegion remote_;
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

TEST_F(UcxRepliesTest, ARepliesRideInTheRequestBatchToTheSamePeer) {
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
    const UcxMessageCounts before = MessageCountsOf(*target_);
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (MessageCountsOf(*target_).batches_served == before.batches_served && absl::Now() < deadline) {
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
    const UcxMessageCounts after = MessageCountsOf(*target_);
    EXPECT_EQ(after.replies_with_requests, before.replies_with_requests + 1);
    EXPECT_EQ(after.replies_sent, before.replies_sent);
    EXPECT_EQ(std::memcmp(asked, region_->data() + at, sizeof asked), 0);
    EXPECT_EQ(std::memcmp(back_read, region_->data() + at + 100, sizeof back_read), 0);
  }
}

}  // namespace
}  // namespace fathom::fabric
