// The Fabric conformance tests (see conformance.h). Every implementation runs exactly these.
#include "platform/fabric/testing/conformance.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/fabric/testing/pattern.h"

namespace fathom::fabric::testing {
namespace {

constexpr absl::Duration kWait = absl::Seconds(30);

struct Link {
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Endpoint> endpoint;  // destroyed before the worker
  RemoteRegion remote;
};

class FabricConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = MakeConformanceEnv();
    absl::Status started = env_->Start();
    ASSERT_TRUE(started.ok()) << started;
  }

  Link Connect() {
    Link link;
    auto worker = env_->local().CreateWorker();
    EXPECT_TRUE(worker.ok()) << worker.status();
    if (!worker.ok()) return link;
    link.worker = std::move(*worker);
    auto endpoint = link.worker->Connect(env_->peer_address());
    EXPECT_TRUE(endpoint.ok()) << endpoint.status();
    if (!endpoint.ok()) return link;
    link.endpoint = std::move(*endpoint);
    auto remote = link.endpoint->ImportRegion(env_->peer_region());
    EXPECT_TRUE(remote.ok()) << remote.status();
    if (remote.ok()) link.remote = *remote;
    return link;
  }

  // Posts with `post`, flushes, and returns the single completion's status.
  absl::Status RunOne(Link& link, const std::function<absl::Status(Endpoint&)>& post) {
    if (absl::Status s = post(*link.endpoint); !s.ok()) return s;
    if (absl::Status s = link.endpoint->Flush(); !s.ok()) return s;
    std::vector<Completion> done;
    if (absl::Status s = WaitForCompletions(*link.worker, 1, done, kWait); !s.ok()) return s;
    return done[0].status;
  }

  absl::Status Read(Link& link, uint64_t offset, void* out, size_t length) {
    return RunOne(link, [&](Endpoint& ep) { return ep.PostRead(link.remote, offset, out, length, 1); });
  }
  absl::Status Write(Link& link, uint64_t offset, const void* in, size_t length) {
    return RunOne(link, [&](Endpoint& ep) { return ep.PostWrite(link.remote, offset, in, length, 2); });
  }

  std::unique_ptr<ConformanceEnv> env_;
};

TEST_F(FabricConformanceTest, ReadSeesPeerMemory) {
  Link link = Connect();
  ASSERT_NE(link.endpoint, nullptr);
  for (uint64_t offset : {0ull, 1ull, 4095ull, 123457ull, kPeerRegionBytes - 100ull}) {
    std::vector<uint8_t> got(100);
    ASSERT_TRUE(Read(link, offset, got.data(), got.size()).ok());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], PatternByte(offset + i)) << offset << "+" << i;
  }
}

// AllocateRegion's memory reads as zero, also where a region written and freed just before was (a
// fabric that reused memory without clearing it would show its bytes), and through a peer's reads.
TEST_F(FabricConformanceTest, AllocatedRegionsAreZero) {
  constexpr size_t kSize = 4 << 20;
  for (int round = 0; round < 3; ++round) {
    auto region = env_->local().AllocateRegion(kSize);
    ASSERT_TRUE(region.ok()) << region.status();
    const std::byte* data = (*region)->data();
    EXPECT_TRUE(std::all_of(data, data + kSize, [](std::byte b) { return b == std::byte{0}; })) << "round " << round;
    std::memset((*region)->data(), 0xA5, kSize);  // freed dirty: the next round must not see it
  }
}

TEST_F(FabricConformanceTest, TransfersFromOneByteTo16MiB) {
  Link link = Connect();
  ASSERT_NE(link.endpoint, nullptr);
  uint64_t offset = 3;  // unaligned on purpose; ranges never overlap, so neighbours keep the pattern
  for (size_t size : {size_t{1}, size_t{7}, size_t{8}, size_t{63}, size_t{64}, size_t{4096}, size_t{65537},
                      size_t{1} << 20, size_t{16} << 20}) {
    SCOPED_TRACE(size);
    offset += 16;
    std::vector<uint8_t> data(size);
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>(i * 7 + size);
    ASSERT_TRUE(Write(link, offset, data.data(), size).ok());
    std::vector<uint8_t> back(size, 0xee);
    ASSERT_TRUE(Read(link, offset, back.data(), size).ok());
    ASSERT_EQ(0, std::memcmp(data.data(), back.data(), size));
    // The bytes next to the written range are untouched.
    uint8_t before = 0, after = 0;
    ASSERT_TRUE(Read(link, offset - 1, &before, 1).ok());
    ASSERT_TRUE(Read(link, offset + size, &after, 1).ok());
    EXPECT_EQ(before, PatternByte(offset - 1));
    EXPECT_EQ(after, PatternByte(offset + size));
    offset += size;
  }
}

TEST_F(FabricConformanceTest, CompareSwapSwapsOnlyOnMatch) {
  Link link = Connect();
  ASSERT_NE(link.endpoint, nullptr);
  const uint64_t offset = 4096;
  uint64_t initial = 0;
  ASSERT_TRUE(Read(link, offset, &initial, 8).ok());
  uint64_t old = 0;
  ASSERT_TRUE(RunOne(link, [&](Endpoint& ep) {
                return ep.PostCompareSwap(link.remote, offset, initial + 1, 42, &old, 3);
              }).ok());
  EXPECT_EQ(old, initial);  // mismatch: unchanged, old value returned
  ASSERT_TRUE(RunOne(link, [&](Endpoint& ep) {
                return ep.PostCompareSwap(link.remote, offset, initial, 42, &old, 3);
              }).ok());
  EXPECT_EQ(old, initial);
  uint64_t now = 0;
  ASSERT_TRUE(Read(link, offset, &now, 8).ok());
  EXPECT_EQ(now, 42u);
}

TEST_F(FabricConformanceTest, FetchAddReturnsOldValueAndAdds) {
  Link link = Connect();
  ASSERT_NE(link.endpoint, nullptr);
  const uint64_t offset = 8192;
  uint64_t zero = 0, old = 1;
  ASSERT_TRUE(Write(link, offset, &zero, 8).ok());
  ASSERT_TRUE(RunOne(link, [&](Endpoint& ep) { return ep.PostFetchAdd(link.remote, offset, 5, &old, 4); }).ok());
  EXPECT_EQ(old, 0u);
  ASSERT_TRUE(RunOne(link, [&](Endpoint& ep) {
                return ep.PostFetchAdd(link.remote, offset, ~uint64_t{0}, &old, 4);  // adds -1
              }).ok());
  EXPECT_EQ(old, 5u);
  uint64_t now = 0;
  ASSERT_TRUE(Read(link, offset, &now, 8).ok());
  EXPECT_EQ(now, 4u);
}

TEST_F(FabricConformanceTest, HundredsOfOutstandingOperationsEachComplete) {
  Link link = Connect();
  ASSERT_NE(link.endpoint, nullptr);
  constexpr int kOps = 600;
  std::vector<std::array<uint8_t, 64>> buffers(kOps);
  std::vector<uint64_t> olds(kOps);
  for (int i = 0; i < kOps; ++i) {
    const uint64_t offset = 1 << 20 | uint64_t(i) * 1000;
    absl::Status s = i % 3 == 2 ? link.endpoint->PostFetchAdd(link.remote, (uint64_t(i) * 4096) & ~7ull, 0,
                                                               &olds[i], i)
                                : link.endpoint->PostRead(link.remote, offset, buffers[i].data(), 64, i);
    ASSERT_TRUE(s.ok()) << i << ": " << s;
  }
  ASSERT_TRUE(link.endpoint->Flush().ok());
  std::vector<Completion> done;
  ASSERT_TRUE(WaitForCompletions(*link.worker, kOps, done, kWait).ok());
  ASSERT_EQ(done.size(), size_t{kOps});
  std::vector<bool> seen(kOps, false);
  for (const Completion& c : done) {
    ASSERT_TRUE(c.status.ok()) << c.status;
    ASSERT_LT(c.context, uint64_t{kOps});
    ASSERT_FALSE(seen[c.context]) << "duplicate completion " << c.context;
    seen[c.context] = true;
    EXPECT_EQ(c.type, c.context % 3 == 2 ? OpType::kFetchAdd : OpType::kRead);
  }
  for (int i = 0; i < kOps; ++i) {
    if (i % 3 == 2) continue;
    const uint64_t offset = 1 << 20 | uint64_t(i) * 1000;
    for (int b = 0; b < 64; ++b) ASSERT_EQ(buffers[i][b], PatternByte(offset + b)) << i;
  }
  EXPECT_EQ(link.worker->outstanding(), 0u);
}

TEST_F(FabricConformanceTest, AtomicsFromThreadsAndAnotherProcessCountExactly) {
  const uint64_t add_offset = 64, cas_offset = 128;
  {
    Link link = Connect();
    ASSERT_NE(link.endpoint, nullptr);
    uint64_t zeros[16] = {};
    ASSERT_TRUE(Write(link, 0, zeros, sizeof zeros).ok());
    ASSERT_TRUE(Write(link, cas_offset, zeros, 8).ok());
  }
  constexpr int kThreads = 3, kAddsPerThread = 400, kCasPerThread = 100, kRemoteAdds = 400;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Link link = Connect();
      if (link.endpoint == nullptr) {
        ++failures;
        return;
      }
      // FetchAdd in batches of 8 outstanding.
      for (int done = 0; done < kAddsPerThread; done += 8) {
        uint64_t olds[8];
        for (int i = 0; i < 8; ++i) {
          if (!link.endpoint->PostFetchAdd(link.remote, add_offset, 1, &olds[i], i).ok()) ++failures;
        }
        if (!link.endpoint->Flush().ok()) ++failures;
        std::vector<Completion> c;
        if (!WaitForCompletions(*link.worker, 8, c, kWait).ok()) ++failures;
        for (auto& x : c) failures += x.status.ok() ? 0 : 1;
      }
      // Increment by compare-and-swap retry loops: lost updates would show in the total.
      for (int i = 0; i < kCasPerThread; ++i) {
        uint64_t seen = 0;
        if (!Read(link, cas_offset, &seen, 8).ok()) ++failures;
        while (true) {
          uint64_t old = 0;
          absl::Status s = RunOne(link, [&](Endpoint& ep) {
            return ep.PostCompareSwap(link.remote, cas_offset, seen, seen + 1, &old, 9);
          });
          if (!s.ok()) {
            ++failures;
            break;
          }
          if (old == seen) break;
          seen = old;
        }
      }
    });
  }
  absl::Status remote = env_->RunRemoteAdder(add_offset, kRemoteAdds);
  for (auto& t : threads) t.join();
  ASSERT_TRUE(remote.ok()) << remote;
  EXPECT_EQ(failures.load(), 0);
  Link link = Connect();
  uint64_t adds = 0, cas = 0;
  ASSERT_TRUE(Read(link, add_offset, &adds, 8).ok());
  ASSERT_TRUE(Read(link, cas_offset, &cas, 8).ok());
  EXPECT_EQ(adds, uint64_t{kThreads * kAddsPerThread + kRemoteAdds});
  EXPECT_EQ(cas, uint64_t{kThreads * kCasPerThread});
}

TEST_F(FabricConformanceTest, BadArgumentsAreRejectedAtPost) {
  Link link = Connect();
  ASSERT_NE(link.endpoint, nullptr);
  Endpoint& ep = *link.endpoint;
  uint8_t buf[64];
  uint64_t old;
  const uint64_t end = link.remote.length;
  EXPECT_EQ(ep.PostRead(link.remote, end - 8, buf, 16, 0).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ep.PostWrite(link.remote, end, buf, 1, 0).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ep.PostRead(link.remote, ~uint64_t{0} - 4, buf, 16, 0).code(), absl::StatusCode::kOutOfRange);
  EXPECT_FALSE(ep.PostRead(link.remote, 0, buf, 0, 0).ok());
  EXPECT_EQ(ep.PostFetchAdd(link.remote, 12, 1, &old, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ep.PostCompareSwap(link.remote, 3, 0, 1, &old, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ep.PostFetchAdd(link.remote, end, 1, &old, 0).code(), absl::StatusCode::kOutOfRange);
  RemoteRegion unknown{57, 1 << 20};
  EXPECT_EQ(ep.PostRead(unknown, 0, buf, 8, 0).code(), absl::StatusCode::kInvalidArgument);
  // None of them produced a completion, and the endpoint still works.
  EXPECT_EQ(link.worker->outstanding(), 0u);
  EXPECT_TRUE(Read(link, 0, buf, 8).ok());
  EXPECT_TRUE(ep.health().ok());
}

TEST_F(FabricConformanceTest, CorruptDescriptorsAndAddressesAreRejected) {
  auto worker = env_->local().CreateWorker();
  ASSERT_TRUE(worker.ok());
  EXPECT_EQ((*worker)->Connect("not an address").status().code(), absl::StatusCode::kInvalidArgument);
  std::string address = env_->peer_address();
  address[address.size() / 2] ^= 0x5a;
  EXPECT_EQ((*worker)->Connect(address).status().code(), absl::StatusCode::kInvalidArgument);
  std::string descriptor = env_->peer_region().Serialize();
  descriptor[descriptor.size() / 2] ^= 0x01;
  EXPECT_FALSE(RegionDescriptor::Parse(descriptor).ok());
  // A well-formed descriptor whose remote key is not a key at all is refused at import.
  auto ep = (*worker)->Connect(env_->peer_address());
  ASSERT_TRUE(ep.ok());
  RegionDescriptor empty_key = env_->peer_region();
  empty_key.remote_key.clear();
  EXPECT_FALSE((*ep)->ImportRegion(empty_key).ok());
}

TEST_F(FabricConformanceTest, EndpointOutlivingItsWorkerIsFailedAndHarmless) {
  Link link = Connect();
  ASSERT_NE(link.endpoint, nullptr);
  uint8_t buf[8];
  ASSERT_TRUE(Read(link, 0, buf, 8).ok());
  link.worker.reset();  // against the lifetime rule: the endpoint must not hang or crash
  EXPECT_FALSE(link.endpoint->health().ok());
  EXPECT_FALSE(link.endpoint->PostRead(link.remote, 0, buf, 8, 0).ok());
  EXPECT_FALSE(link.endpoint->Flush().ok());
  link.endpoint.reset();
}

TEST_F(FabricConformanceTest, ConnectingToADeadPeerFailsInBoundedTime) {
  const std::string address = env_->peer_address();
  env_->KillPeer();
  auto worker = env_->local().CreateWorker();
  ASSERT_TRUE(worker.ok());
  auto ep = (*worker)->Connect(address);
  if (!ep.ok()) return;  // refused at once: fine
  // Accepted: then its first operation must fail, within the timeout plus detection.
  auto remote = (*ep)->ImportRegion(env_->peer_region());
  if (!remote.ok()) return;
  uint8_t buf[8];
  const absl::Duration bound = env_->options().operation_timeout + 10 * env_->options().keepalive_interval;
  const absl::Time start = absl::Now();
  bool failed = false;
  for (int i = 0; !failed && absl::Now() - start < bound + absl::Seconds(5); ++i) {
    if (!(*ep)->PostRead(*remote, 0, buf, 8, i).ok()) break;  // refused: the endpoint knows
    (*ep)->Flush().IgnoreError();
    std::vector<Completion> done;
    ASSERT_TRUE(WaitForCompletions(**worker, 1, done, bound + absl::Seconds(5)).ok());
    failed = !done[0].status.ok();
    env_->Advance(absl::Milliseconds(100));
  }
  EXPECT_FALSE((*ep)->health().ok());
  std::cerr << "[ info ] endpoint to a dead peer failed after " << absl::Now() - start << "\n";
}

TEST_F(FabricConformanceTest, KilledPeerFailsPendingAndNewOperationsInBoundedTime) {
  Link link = Connect();
  ASSERT_NE(link.endpoint, nullptr);
  uint8_t buf[64];
  ASSERT_TRUE(Read(link, 0, buf, 64).ok());
  env_->KillPeer();
  // Keep operating until the failure is seen; every operation must complete (OK before the fabric notices,
  // then an error), and it must notice within a bounded time.
  const absl::Time start = absl::Now();
  const absl::Duration bound = env_->options().operation_timeout + 10 * env_->options().keepalive_interval +
                               absl::Seconds(5);
  bool failed = false;
  int posted = 0;
  while (!failed && absl::Now() - start < bound) {
    absl::Status s = link.endpoint->PostWrite(link.remote, 0, buf, 64, posted);
    if (!s.ok()) {
      failed = true;  // refused at post: the endpoint already knows
      break;
    }
    ++posted;
    link.endpoint->Flush().IgnoreError();
    std::vector<Completion> done;
    absl::Status waited = WaitForCompletions(*link.worker, 1, done, bound);
    ASSERT_TRUE(waited.ok()) << "an operation to a dead peer never completed: " << waited;
    if (!done[0].status.ok()) failed = true;
    env_->Advance(absl::Milliseconds(100));
  }
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(failed) << "no failure within " << bound;
  std::cerr << "[ info ] dead peer detected after " << took << " (" << posted << " posts)\n";
  EXPECT_FALSE(link.endpoint->health().ok());
  EXPECT_FALSE(link.endpoint->PostRead(link.remote, 0, buf, 8, 0).ok());
}

TEST_F(FabricConformanceTest, SilentPeerTimesOutWithDeadlineExceeded) {
  Link link = Connect();
  ASSERT_NE(link.endpoint, nullptr);
  uint8_t buf[64];
  ASSERT_TRUE(Read(link, 0, buf, 64).ok());
  absl::Status silenced = env_->SilencePeer();
  if (absl::IsUnimplemented(silenced)) GTEST_SKIP() << silenced;
  ASSERT_TRUE(silenced.ok()) << silenced;
  const absl::Time start = absl::Now();
  ASSERT_TRUE(link.endpoint->PostRead(link.remote, 0, buf, 64, 7).ok());
  ASSERT_TRUE(link.endpoint->PostRead(link.remote, 64, buf, 64, 8).ok());
  ASSERT_TRUE(link.endpoint->Flush().ok());
  std::vector<Completion> done;
  for (int i = 0; i < 200 && done.size() < 2; ++i) {
    env_->Advance(env_->options().operation_timeout / 10);
    WaitForCompletions(*link.worker, 2 - done.size(), done, env_->options().operation_timeout / 4)
        .IgnoreError();
  }
  ASSERT_EQ(done.size(), 2u);
  bool deadline_seen = false;
  for (const Completion& c : done) {
    EXPECT_FALSE(c.status.ok());
    deadline_seen |= absl::IsDeadlineExceeded(c.status) || absl::IsUnavailable(c.status);
  }
  EXPECT_TRUE(deadline_seen);
  EXPECT_FALSE(link.endpoint->health().ok());
  std::cerr << "[ info ] silent peer: operations failed after " << absl::Now() - start << "\n";
}

// A read that ended without its data (here: its endpoint was closed while the peer did not answer) gives
// its buffer back to the caller, who reuses it at once. Whatever the peer answers later must never land
// there: a late reply into a reused buffer is another object's bytes, checksum and all.
TEST_F(FabricConformanceTest, AReadEndedByClosingItsEndpointNeverWritesItsBufferLater) {
  Link link = Connect();
  ASSERT_NE(link.endpoint, nullptr);
  uint8_t buf[64];
  ASSERT_TRUE(Read(link, 0, buf, 64).ok());
  absl::Status silenced = env_->SilencePeer();
  if (absl::IsUnimplemented(silenced)) GTEST_SKIP() << silenced;
  ASSERT_TRUE(silenced.ok()) << silenced;
  std::vector<uint8_t> late(4096, 0);
  ASSERT_TRUE(link.endpoint->PostRead(link.remote, 0, late.data(), late.size(), 9).ok());
  ASSERT_TRUE(link.endpoint->Flush().ok());
  link.endpoint.reset();  // closes it: the read ends without its data
  std::vector<Completion> done;
  ASSERT_TRUE(WaitForCompletions(*link.worker, 1, done, kWait).ok());
  EXPECT_FALSE(done[0].status.ok());
  std::fill(late.begin(), late.end(), 0xEE);  // the caller's next use of the buffer
  ASSERT_TRUE(env_->ResumePeer().ok());
  // The peer now answers what it was asked; a new endpoint's reads on the same worker make the worker
  // progress well past the moment that answer arrives.
  auto again = link.worker->Connect(env_->peer_address());
  ASSERT_TRUE(again.ok()) << again.status();
  link.endpoint = std::move(*again);
  auto remote = link.endpoint->ImportRegion(env_->peer_region());
  ASSERT_TRUE(remote.ok()) << remote.status();
  link.remote = *remote;
  int reads = 0;
  const absl::Time deadline = absl::Now() + kWait;
  while (reads < 20 && absl::Now() < deadline) {
    env_->Advance(absl::Milliseconds(10));
    if (Read(link, 0, buf, 64).ok()) ++reads;
  }
  EXPECT_EQ(reads, 20);
  EXPECT_EQ(std::count(late.begin(), late.end(), 0xEE), static_cast<long>(late.size()))
      << "a read ended without its data wrote its buffer afterwards";
}

}  // namespace
}  // namespace fathom::fabric::testing
