// Doorbells: a write into a peer's mapped (shared) memory is a plain copy that raises no event at the
// peer, so UcxEndpoint::Flush sends a doorbell after it. A peer asleep in Worker::Wait must wake for it,
// not sleep out its timeout (node threads sleep whenever they are idle, and wait for messages this way).
// FlushQuietly is for writes nobody waits on: no doorbell, so the peer sleeps on.
#include <atomic>
#include <cstring>
#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/fabric/ucx/ucx_fabric.h"

namespace fathom::fabric {
namespace {

TEST(UcxDoorbellTest, AWriteIntoMappedMemoryWakesTheSleepingPeer) {
  UcxOptions options;
  options.transports = "sm";
  // Nothing but the doorbell may wake the sleeper: no keepalive probes meanwhile.
  options.fabric.keepalive_interval = absl::Hours(1);
  auto writer_fabric = CreateUcxFabric(options);
  auto sleeper_fabric = CreateUcxFabric(options);
  ASSERT_TRUE(writer_fabric.ok()) << writer_fabric.status();
  ASSERT_TRUE(sleeper_fabric.ok()) << sleeper_fabric.status();
  auto region = (*sleeper_fabric)->AllocateRegion(4096);
  ASSERT_TRUE(region.ok()) << region.status();
  auto sleeper = (*sleeper_fabric)->CreateWorker();
  ASSERT_TRUE(sleeper.ok()) << sleeper.status();
  // The writer's worker and endpoint live on this thread, the sleeper's worker on its own.
  auto writer = (*writer_fabric)->CreateWorker();
  ASSERT_TRUE(writer.ok()) << writer.status();
  auto endpoint = (*writer)->Connect((*sleeper)->address());
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  auto remote = (*endpoint)->ImportRegion((*region)->descriptor());
  ASSERT_TRUE(remote.ok()) << remote.status();

  constexpr absl::Duration kSleep = absl::Seconds(40);
  std::atomic<bool> waiting{false};
  absl::Duration slept;
  std::thread waiter([&] {
    Worker* worker = sleeper->get();
    waiting.store(true);
    const absl::Time start = absl::Now();
    worker->Wait(kSleep);
    slept = absl::Now() - start;
  });
  while (!waiting.load()) std::this_thread::yield();
  const char byte = 'x';
  ASSERT_TRUE((*endpoint)->PostWrite(*remote, 100, &byte, 1, 7).ok());
  ASSERT_TRUE((*endpoint)->Flush().ok());
  waiter.join();
  EXPECT_EQ(static_cast<char>((*region)->data()[100]), 'x');
  // Woken by the doorbell; without it the peer sleeps all 40 s. (Generous: a loaded machine may
  // take a while to schedule the woken thread.)
  EXPECT_LT(slept, kSleep / 2) << "the sleeping worker was not woken by the write";
  Completion done[1];
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  size_t n = 0;
  while (n == 0 && absl::Now() < deadline) n = (*writer)->Poll(done);
  ASSERT_EQ(n, 1u);
  EXPECT_TRUE(done[0].status.ok()) << done[0].status;
  endpoint->reset();
}

TEST(UcxDoorbellTest, AQuietFlushLetsThePeerSleep) {
  UcxOptions options;
  options.transports = "sm";
  options.fabric.keepalive_interval = absl::Hours(1);  // nothing else may wake the sleeper
  auto writer_fabric = CreateUcxFabric(options);
  auto sleeper_fabric = CreateUcxFabric(options);
  ASSERT_TRUE(writer_fabric.ok() && sleeper_fabric.ok());
  auto region = (*sleeper_fabric)->AllocateRegion(4096);
  auto sleeper = (*sleeper_fabric)->CreateWorker();
  auto writer = (*writer_fabric)->CreateWorker();
  ASSERT_TRUE(region.ok() && sleeper.ok() && writer.ok());
  auto endpoint = (*writer)->Connect((*sleeper)->address());
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  auto remote = (*endpoint)->ImportRegion((*region)->descriptor());
  ASSERT_TRUE(remote.ok()) << remote.status();

  constexpr absl::Duration kSleep = absl::Seconds(2);
  std::atomic<bool> waiting{false};
  absl::Duration slept;
  std::thread waiter([&] {
    waiting.store(true);
    const absl::Time start = absl::Now();
    sleeper->get()->Wait(kSleep);
    slept = absl::Now() - start;
  });
  while (!waiting.load()) std::this_thread::yield();
  const char byte = 'q';
  ASSERT_TRUE((*endpoint)->PostWrite(*remote, 100, &byte, 1, 7).ok());
  ASSERT_TRUE((*endpoint)->FlushQuietly().ok());
  // The write completes at the writer whatever the peer does (a copy into its memory).
  Completion done[1];
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  size_t n = 0;
  while (n == 0 && absl::Now() < deadline) n = (*writer)->Poll(done);
  ASSERT_EQ(n, 1u);
  EXPECT_TRUE(done[0].status.ok()) << done[0].status;
  EXPECT_EQ(static_cast<char>((*region)->data()[100]), 'q');
  waiter.join();
  // Woken, it would have returned within milliseconds.
  EXPECT_GE(slept, kSleep * 3 / 4) << "a quiet write woke the sleeping peer";
  endpoint->reset();
}

}  // namespace
}  // namespace fathom::fabric
