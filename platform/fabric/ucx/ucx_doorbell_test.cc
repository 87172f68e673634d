// Doorbells: a write into a peer's mapped (shared) memory is a plain copy that raises no event at the
// peer, so UcxEndpoint::Flush sends a doorbell after it. A peer asleep in Worker::Wait must wake for it,
// not sleep out its timeout (node threads sleep whenever they are idle, and wait for messages this way).
// FlushQuietly is for writes nobody waits on: no doorbell, so the peer sleeps on, until a Wake rings the
// doorbell it skipped (writes wanted soon, not now).
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/fabric/ucx/ucx_fabric.h"

namespace fathom::fabric {
namespace {

// A writer (its worker and endpoint on the test's thread) and a sleeper (its worker on a thread of its
// own) over UCX shared memory, the writer connected to a region of the sleeper's.
class UcxDoorbellTest : public ::testing::Test {
 protected:
  void SetUp() override {
    UcxOptions options;
    options.transports = "sm";
    // Nothing but a doorbell may wake the sleeper: no keepalive probes meanwhile.
    options.fabric.keepalive_interval = absl::Hours(1);
    auto writer_fabric = CreateUcxFabric(options);
    auto sleeper_fabric = CreateUcxFabric(options);
    ASSERT_TRUE(writer_fabric.ok()) << writer_fabric.status();
    ASSERT_TRUE(sleeper_fabric.ok()) << sleeper_fabric.status();
    writer_fabric_ = std::move(*writer_fabric);
    sleeper_fabric_ = std::move(*sleeper_fabric);
    auto region = sleeper_fabric_->AllocateRegion(4096);
    ASSERT_TRUE(region.ok()) << region.status();
    region_ = std::move(*region);
    auto sleeper = sleeper_fabric_->CreateWorker();
    ASSERT_TRUE(sleeper.ok()) << sleeper.status();
    sleeper_ = std::move(*sleeper);
    auto writer = writer_fabric_->CreateWorker();
    ASSERT_TRUE(writer.ok()) << writer.status();
    writer_ = std::move(*writer);
    auto endpoint = writer_->Connect(sleeper_->address());
    ASSERT_TRUE(endpoint.ok()) << endpoint.status();
    endpoint_ = std::move(*endpoint);
    auto remote = endpoint_->ImportRegion(region_->descriptor());
    ASSERT_TRUE(remote.ok()) << remote.status();
    remote_ = *remote;
  }
  void TearDown() override { endpoint_.reset(); }

  enum class Then { kFlush, kFlushQuietly, kFlushQuietlyAndWake, kFlushAndWake };

  // Write while the sleeper waits up to `sleep`; returns how long it slept.
  absl::Duration SleepThroughWrite(char byte, absl::Duration sleep, Then then) {
    return SleepWhile(sleep, [&] { Write(byte, then); });
  }

  // Runs `meanwhile` while the sleeper waits up to `sleep` on a thread of its own; returns how long it slept.
  absl::Duration SleepWhile(absl::Duration sleep, const std::function<void()>& meanwhile) {
    std::atomic<bool> waiting{false};
    absl::Duration slept;
    std::thread waiter([&] {
      waiting.store(true);
      const absl::Time start = absl::Now();
      sleeper_->Wait(sleep);
      slept = absl::Now() - start;
    });
    while (!waiting.load()) std::this_thread::yield();
    meanwhile();
    waiter.join();
    return slept;
  }

  // Writes `byte` at offset 100 of the sleeper's region, flushes it (`then`), and waits for the write's
  // completion at the writer.
  void Write(char byte, Then then) {
    EXPECT_TRUE(endpoint_->PostWrite(remote_, 100, &byte, 1, 7).ok());
    const bool quietly = then == Then::kFlushQuietly || then == Then::kFlushQuietlyAndWake;
    EXPECT_TRUE((quietly ? endpoint_->FlushQuietly() : endpoint_->Flush()).ok());
    // The write completes at the writer whatever the peer does (a copy into its memory).
    Completion done[1];
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    size_t n = 0;
    while (n == 0 && absl::Now() < deadline) n = writer_->Poll(done);
    EXPECT_EQ(n, 1u);
    if (n == 1) {
      EXPECT_TRUE(done[0].status.ok()) << done[0].status;
    }
    if (then == Then::kFlushQuietlyAndWake || then == Then::kFlushAndWake) endpoint_->Wake();
    EXPECT_EQ(static_cast<char>(region_->data()[100]), byte);
  }

  std::unique_ptr<Fabric> writer_fabric_, sleeper_fabric_;
  std::unique_ptr<Region> region_;
  std::unique_ptr<Worker> sleeper_, writer_;
  std::unique_ptr<Endpoint> endpoint_;
  RemoteRegion remote_;
};

TEST_F(UcxDoorbellTest, AWriteIntoMappedMemoryWakesTheSleepingPeer) {
  constexpr absl::Duration kSleep = absl::Seconds(40);
  // Woken by the doorbell; without it the peer sleeps all 40 s. (Generous: a loaded machine may take a
  // while to schedule the woken thread.)
  EXPECT_LT(SleepThroughWrite('x', kSleep, Then::kFlush), kSleep / 2)
      << "the sleeping worker was not woken by the write";
}

TEST_F(UcxDoorbellTest, MappedMemoryIsReadWithoutThePeer) {
  // Shared memory is mapped: reads are copies, and callers need not look for an owner to ask.
  EXPECT_FALSE(endpoint_->ReadsServedByPeer(remote_));
  EXPECT_FALSE(writer_->ReadsMayBeServedByPeers());
}

TEST_F(UcxDoorbellTest, AQuietFlushLetsThePeerSleep) {
  constexpr absl::Duration kSleep = absl::Seconds(2);
  // Woken, it would have returned within milliseconds.
  EXPECT_GE(SleepThroughWrite('q', kSleep, Then::kFlushQuietly), kSleep * 3 / 4)
      << "a quiet write woke the sleeping peer";
}

TEST_F(UcxDoorbellTest, AWakeAfterAQuietFlushRingsTheDoorbellItSkipped) {
  constexpr absl::Duration kSleep = absl::Seconds(40);
  EXPECT_LT(SleepThroughWrite('w', kSleep, Then::kFlushQuietlyAndWake), kSleep / 2)
      << "Wake did not ring the doorbell the quiet flush skipped";
}

TEST_F(UcxDoorbellTest, AWakeWithNoDoorbellOwedRingsNone) {
  // The flush rings the doorbell, so the Wake after it owes nothing.
  Write('a', Then::kFlushAndWake);
  // Let the sleeper take that doorbell: until a wait sleeps its whole time, something was pending.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline) {
    const absl::Time start = absl::Now();
    sleeper_->Wait(absl::Milliseconds(200));
    if (absl::Now() - start >= absl::Milliseconds(150)) break;
  }
  constexpr absl::Duration kSleep = absl::Seconds(2);
  EXPECT_GE(SleepWhile(kSleep, [&] { endpoint_->Wake(); }), kSleep * 3 / 4)
      << "a Wake with nothing owed woke the sleeping peer";
}

}  // namespace
}  // namespace fathom::fabric
