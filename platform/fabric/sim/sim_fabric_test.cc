// SimFabric semantics: data movement, atomics, argument checks, addresses and keys, ordering, determinism.
// Faults are in sim_faults_test.cc, threads in sim_threads_test.cc.
#include "platform/fabric/sim/sim_fabric.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/fabric/sim/sim_keys.h"
#include "platform/fabric/sim/sim_test_cluster.h"
#include "platform/fabric/sim/test_seed.h"
#include "platform/fabric/wire.h"

namespace fathom::fabric::sim {
namespace {

TEST(SimFabricTest, WriteThenReadMovesRealBytes) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));

  std::string source(100, '\0');
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<char>(i * 7 + 1);
  ASSERT_OK(link.endpoint->PostWrite(link.remote, 40, source.data(), source.size(), /*context=*/11));
  Completion written = FlushAndCollectOne(cluster.worker(1), *link.endpoint);
  EXPECT_EQ(written.context, 11u);
  EXPECT_EQ(written.type, OpType::kWrite);
  ASSERT_OK(written.status);
  // Remote completion: the bytes are in the target's memory when the Write completes.
  EXPECT_EQ(std::memcmp(cluster.region(2).data() + 40, source.data(), source.size()), 0);

  std::string back(100, '\0');
  ASSERT_OK(link.endpoint->PostRead(link.remote, 40, back.data(), back.size(), /*context=*/12));
  Completion read = FlushAndCollectOne(cluster.worker(1), *link.endpoint);
  EXPECT_EQ(read.context, 12u);
  EXPECT_EQ(read.type, OpType::kRead);
  ASSERT_OK(read.status);
  EXPECT_EQ(back, source);
  EXPECT_EQ(cluster.worker(1).outstanding(), 0u);
}

TEST(SimFabricTest, CompareSwapSwapsOnlyOnMatch) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  uint64_t* word = reinterpret_cast<uint64_t*>(cluster.region(2).data() + 64);
  *word = 5;

  uint64_t old = 0;
  ASSERT_OK(link.endpoint->PostCompareSwap(link.remote, 64, /*expected=*/4, /*desired=*/9, &old, 1));
  Completion miss = FlushAndCollectOne(cluster.worker(1), *link.endpoint);
  ASSERT_OK(miss.status);
  EXPECT_EQ(miss.type, OpType::kCompareSwap);
  EXPECT_EQ(old, 5u);
  EXPECT_EQ(*word, 5u);

  ASSERT_OK(link.endpoint->PostCompareSwap(link.remote, 64, /*expected=*/5, /*desired=*/9, &old, 2));
  ASSERT_OK(FlushAndCollectOne(cluster.worker(1), *link.endpoint).status);
  EXPECT_EQ(old, 5u);
  EXPECT_EQ(*word, 9u);
}

TEST(SimFabricTest, FetchAddReturnsOldValueAndWraps) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  uint64_t* word = reinterpret_cast<uint64_t*>(cluster.region(2).data() + 8);
  *word = UINT64_MAX - 1;

  uint64_t old = 0;
  ASSERT_OK(link.endpoint->PostFetchAdd(link.remote, 8, 3, &old, 1));
  Completion done = FlushAndCollectOne(cluster.worker(1), *link.endpoint);
  ASSERT_OK(done.status);
  EXPECT_EQ(done.type, OpType::kFetchAdd);
  EXPECT_EQ(old, UINT64_MAX - 1);
  EXPECT_EQ(*word, 1u);
}

TEST(SimFabricTest, RegionsAreZeroedAlignedOrCallerOwned) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimNetwork network(TestOptions(seed));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Fabric> fabric, network.AddNode(7));
  EXPECT_EQ(fabric->name(), "sim");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Region> region, fabric->AllocateRegion(10000));
  EXPECT_EQ(region->size(), 10000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(region->data()) % 4096, 0u);
  EXPECT_TRUE(std::all_of(region->data(), region->data() + region->size(), [](std::byte b) {
    return b == std::byte{0};
  }));
  EXPECT_EQ(region->descriptor().length, 10000u);
  EXPECT_EQ(region->descriptor().base, reinterpret_cast<uint64_t>(region->data()));
  // The descriptor survives the control plane's format.
  ASSERT_OK_AND_ASSIGN(RegionDescriptor parsed, RegionDescriptor::Parse(region->descriptor().Serialize()));
  EXPECT_EQ(parsed.remote_key, region->descriptor().remote_key);

  EXPECT_EQ(fabric->AllocateRegion(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fabric->RegisterRegion(nullptr, 8).status().code(), absl::StatusCode::kInvalidArgument);

  // Caller memory: fabric writes land in the caller's buffer.
  std::vector<uint64_t> mine(16, 0);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Region> registered,
                       fabric->RegisterRegion(mine.data(), mine.size() * sizeof(uint64_t)));
  EXPECT_EQ(registered->data(), reinterpret_cast<std::byte*>(mine.data()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Worker> worker, fabric->CreateWorker());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Endpoint> loopback, worker->Connect(worker->address()));
  ASSERT_OK_AND_ASSIGN(RemoteRegion remote, loopback->ImportRegion(registered->descriptor()));
  uint64_t old = 0;
  ASSERT_OK(loopback->PostFetchAdd(remote, 3 * 8, 42, &old, 0));
  ASSERT_OK(FlushAndCollectOne(*worker, *loopback).status);
  EXPECT_EQ(mine[3], 42u);
  // Regions of one node get distinct keys.
  EXPECT_NE(registered->descriptor().remote_key, region->descriptor().remote_key);
}

TEST(SimFabricTest, PostRejectsBadArgumentsAtOnce) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  Endpoint& ep = *link.endpoint;
  char buf[64];
  uint64_t old = 0;
  const RemoteRegion unknown{link.remote.index + 1, 4096};

  EXPECT_EQ(ep.PostRead(unknown, 0, buf, 8, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ep.PostWrite(unknown, 0, buf, 8, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ep.PostFetchAdd(unknown, 0, 1, &old, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ep.PostRead(link.remote, 4090, buf, 8, 0).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ep.PostWrite(link.remote, 4097, buf, 1, 0).code(), absl::StatusCode::kOutOfRange);
  // offset + length overflows 64 bits.
  EXPECT_EQ(ep.PostRead(link.remote, UINT64_MAX - 2, buf, 8, 0).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ep.PostRead(link.remote, 8, buf, SIZE_MAX, 0).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ep.PostCompareSwap(link.remote, 4092, 0, 1, &old, 0).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ep.PostCompareSwap(link.remote, 12, 0, 1, &old, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ep.PostFetchAdd(link.remote, 3, 1, &old, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ep.PostFetchAdd(link.remote, 8, 1, nullptr, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ep.PostRead(link.remote, 0, buf, 0, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ep.PostRead(link.remote, 0, nullptr, 8, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ep.PostWrite(link.remote, 0, nullptr, 8, 0).code(), absl::StatusCode::kInvalidArgument);

  // Rejected posts produce no completion.
  ASSERT_OK(ep.Flush());
  EXPECT_EQ(cluster.worker(1).outstanding(), 0u);
  EXPECT_EQ(cluster.network.RunUntilIdle(), 0u);
  Completion out[4];
  EXPECT_EQ(cluster.worker(1).Poll(out), 0u);
  EXPECT_EQ(cluster.network.stats().operations, 0u);
  // The last byte and the last word are in range.
  ASSERT_OK(ep.PostRead(link.remote, 4095, buf, 1, 0));
  ASSERT_OK(ep.PostFetchAdd(link.remote, 4088, 1, &old, 0));
  ASSERT_OK(ep.Flush());
  for (const Completion& c : Collect(cluster.worker(1), 2)) EXPECT_TRUE(c.status.ok()) << c.status;
}

TEST(SimFabricTest, MaxOutstandingIsPerWorker) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimOptions options = TestOptions(seed);
  options.fabric.max_outstanding = 4;
  SimCluster cluster(options);
  ASSERT_OK(cluster.Start(3, 4096));
  ASSERT_OK_AND_ASSIGN(Link to2, cluster.Connect(1, 2));
  ASSERT_OK_AND_ASSIGN(Link to3, cluster.Connect(1, 3));
  char buf[4][8];
  ASSERT_OK(to2.endpoint->PostRead(to2.remote, 0, buf[0], 8, 0));
  ASSERT_OK(to2.endpoint->PostRead(to2.remote, 0, buf[1], 8, 1));
  ASSERT_OK(to3.endpoint->PostRead(to3.remote, 0, buf[2], 8, 2));
  ASSERT_OK(to3.endpoint->PostRead(to3.remote, 0, buf[3], 8, 3));
  EXPECT_EQ(to3.endpoint->PostRead(to3.remote, 0, buf[3], 8, 4).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(cluster.worker(1).outstanding(), 4u);
  ASSERT_OK(to2.endpoint->Flush());
  ASSERT_OK(to3.endpoint->Flush());
  // Completions count as outstanding until Poll returns them.
  EXPECT_GT(cluster.network.RunUntilIdle(), 0u);
  EXPECT_EQ(cluster.worker(1).outstanding(), 4u);
  EXPECT_EQ(to2.endpoint->PostRead(to2.remote, 0, buf[0], 8, 5).code(), absl::StatusCode::kResourceExhausted);
  Completion out[1];
  ASSERT_EQ(cluster.worker(1).Poll(out), 1u);
  EXPECT_EQ(cluster.worker(1).outstanding(), 3u);
  ASSERT_OK(to2.endpoint->PostRead(to2.remote, 0, buf[0], 8, 5));
  ASSERT_OK(to2.endpoint->Flush());
  EXPECT_EQ(Collect(cluster.worker(1), 4).size(), 4u);
  EXPECT_EQ(cluster.worker(1).outstanding(), 0u);
  // Another worker has its own budget.
  EXPECT_EQ(cluster.worker(2).outstanding(), 0u);
}

TEST(SimFabricTest, NothingStartsBeforeFlush) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  const uint64_t value = 0xabcdef;
  ASSERT_OK(link.endpoint->PostWrite(link.remote, 0, &value, 8, 1));
  Completion out[4];
  for (int i = 0; i < 10; ++i) EXPECT_EQ(cluster.worker(1).Poll(out), 0u);
  EXPECT_EQ(cluster.network.RunUntilIdle(), 0u);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(cluster.region(2).data()), 0u);
  EXPECT_EQ(cluster.worker(1).outstanding(), 1u);
  ASSERT_OK(FlushAndCollectOne(cluster.worker(1), *link.endpoint).status);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(cluster.region(2).data()), value);
}

TEST(SimFabricTest, LatencyIsWithinBoundsInVirtualTime) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimOptions options = TestOptions(seed);
  options.min_latency = absl::Microseconds(10);
  options.max_latency = absl::Microseconds(20);
  SimCluster cluster(options);
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  for (int i = 0; i < 20; ++i) {
    const absl::Time posted = cluster.network.clock().Now();
    uint64_t word = 0;
    ASSERT_OK(link.endpoint->PostRead(link.remote, 0, &word, 8, i));
    ASSERT_OK(FlushAndCollectOne(cluster.worker(1), *link.endpoint).status);
    const absl::Duration took = cluster.network.clock().Now() - posted;
    EXPECT_GE(took, options.min_latency);
    EXPECT_LE(took, options.max_latency);
  }
}

TEST(SimFabricTest, EndpointExecutesInOrderButEndpointsReorder) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimOptions options = TestOptions(seed);
  options.min_latency = absl::Microseconds(1);
  options.max_latency = absl::Microseconds(500);
  SimCluster cluster(options);
  ASSERT_OK(cluster.Start(3, 4096));
  ASSERT_OK_AND_ASSIGN(Link a, cluster.Connect(1, 2));
  ASSERT_OK_AND_ASSIGN(Link b, cluster.Connect(1, 3));
  constexpr int kOps = 100;
  std::vector<uint64_t> values(kOps);
  for (int i = 0; i < kOps; ++i) {
    values[i] = i + 1;
    // Every write on `a` hits the same word: only FIFO execution leaves the last value there.
    ASSERT_OK(a.endpoint->PostWrite(a.remote, 0, &values[i], 8, i));
    ASSERT_OK(b.endpoint->PostWrite(b.remote, 0, &values[i], 8, 1000 + i));
  }
  ASSERT_OK(a.endpoint->Flush());
  ASSERT_OK(b.endpoint->Flush());
  std::vector<Completion> done = Collect(cluster.worker(1), 2 * kOps);
  ASSERT_EQ(done.size(), 2u * kOps);
  std::vector<uint64_t> order_a, order_b;
  bool interleaved = false;
  for (size_t i = 0; i < done.size(); ++i) {
    ASSERT_OK(done[i].status);
    (done[i].context < 1000 ? order_a : order_b).push_back(done[i].context);
    if (i > 0 && (done[i].context < 1000) != (done[i - 1].context < 1000)) interleaved = true;
  }
  EXPECT_TRUE(std::is_sorted(order_a.begin(), order_a.end()));
  EXPECT_TRUE(std::is_sorted(order_b.begin(), order_b.end()));
  EXPECT_TRUE(interleaved) << "completions of two endpoints never interleaved";
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(cluster.region(2).data()), uint64_t{kOps});
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(cluster.region(3).data()), uint64_t{kOps});
}

TEST(SimFabricTest, ConnectChecksAddresses) {
  const uint64_t seed = TestSeed();
  SimCluster cluster(TestOptions(seed));
  SCOPED_TRACE(SeedTrace(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  Worker& worker = cluster.worker(1);
  EXPECT_EQ(worker.Connect("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(worker.Connect("garbage that is not an address").status().code(),
            absl::StatusCode::kInvalidArgument);
  std::string flipped = cluster.worker(2).address();
  flipped[flipped.size() / 2] ^= 0x40;
  EXPECT_EQ(worker.Connect(flipped).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(worker.Connect(EncodeAddress(FabricKind::kUcx, "ucx bytes")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(worker.Connect(EncodeAddress(FabricKind::kSim, "short")).status().code(),
            absl::StatusCode::kInvalidArgument);

  // The address of another network's worker, even with the same node id.
  SimNetwork other(TestOptions(seed));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Fabric> other_node, other.AddNode(2));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Worker> other_worker, other_node->CreateWorker());
  EXPECT_EQ(worker.Connect(other_worker->address()).status().code(), absl::StatusCode::kInvalidArgument);

  // Well-formed addresses in this network that name no node or no worker.
  ASSERT_OK_AND_ASSIGN(internal::WorkerAddress mine, internal::DecodeWorkerAddress(cluster.worker(2).address()));
  EXPECT_EQ(mine.node, 2u);
  internal::WorkerAddress no_node = mine;
  no_node.node = 99;
  EXPECT_EQ(worker.Connect(internal::EncodeWorkerAddress(no_node)).status().code(), absl::StatusCode::kNotFound);
  internal::WorkerAddress no_worker = mine;
  no_worker.worker = 5;
  EXPECT_EQ(worker.Connect(internal::EncodeWorkerAddress(no_worker)).status().code(),
            absl::StatusCode::kNotFound);

  // Node ids are unique.
  EXPECT_EQ(cluster.network.AddNode(2).status().code(), absl::StatusCode::kAlreadyExists);
}

TEST(SimFabricTest, ImportRegionChecksKeys) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(3, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  const RegionDescriptor good = cluster.region(2).descriptor();

  RegionDescriptor bad = good;
  bad.remote_key = "";
  EXPECT_EQ(link.endpoint->ImportRegion(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad.remote_key = good.remote_key.substr(0, good.remote_key.size() - 1);
  EXPECT_EQ(link.endpoint->ImportRegion(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad.remote_key = good.remote_key + "x";
  EXPECT_EQ(link.endpoint->ImportRegion(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad.remote_key = good.remote_key;
  bad.remote_key[0] ^= 1;  // magic
  EXPECT_EQ(link.endpoint->ImportRegion(bad).status().code(), absl::StatusCode::kInvalidArgument);
  // A region of node 3 through an endpoint to node 2.
  EXPECT_EQ(link.endpoint->ImportRegion(cluster.region(3).descriptor()).status().code(),
            absl::StatusCode::kInvalidArgument);

  // A well-formed key naming a region that does not exist imports, and its operations fail.
  bad.remote_key = good.remote_key;
  bad.remote_key[16] ^= 0x10;  // region id
  ASSERT_OK_AND_ASSIGN(RemoteRegion ghost, link.endpoint->ImportRegion(bad));
  uint64_t word = 0;
  ASSERT_OK(link.endpoint->PostRead(ghost, 0, &word, 8, 1));
  Completion done = FlushAndCollectOne(cluster.worker(1), *link.endpoint);
  EXPECT_EQ(done.status.code(), absl::StatusCode::kNotFound) << done.status;
  // The endpoint stays usable.
  ASSERT_OK(link.endpoint->health());
  ASSERT_OK(link.endpoint->PostRead(link.remote, 0, &word, 8, 2));
  ASSERT_OK(FlushAndCollectOne(cluster.worker(1), *link.endpoint).status);
}

TEST(SimFabricTest, LyingDescriptorLengthNeverCopiesOutsideTheRegion) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Endpoint> ep, cluster.worker(1).Connect(cluster.worker(2).address()));
  RegionDescriptor liar = cluster.region(2).descriptor();
  liar.length = 1 << 20;
  ASSERT_OK_AND_ASSIGN(RemoteRegion remote, ep->ImportRegion(liar));
  std::vector<char> buf(8192);
  ASSERT_OK(ep->PostRead(remote, 0, buf.data(), buf.size(), 1));
  EXPECT_EQ(FlushAndCollectOne(cluster.worker(1), *ep).status.code(), absl::StatusCode::kOutOfRange);
}

TEST(SimFabricTest, ClosingAnEndpointCancelsItsOperations) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  uint64_t words[3] = {};
  {
    ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
    ASSERT_OK(link.endpoint->PostRead(link.remote, 0, &words[0], 8, 1));
    ASSERT_OK(link.endpoint->PostRead(link.remote, 8, &words[1], 8, 2));
    ASSERT_OK(link.endpoint->Flush());
    ASSERT_OK(link.endpoint->PostRead(link.remote, 16, &words[2], 8, 3));  // never flushed
  }
  std::vector<Completion> done = Collect(cluster.worker(1), 3);
  ASSERT_EQ(done.size(), 3u);
  for (size_t i = 0; i < done.size(); ++i) {
    EXPECT_EQ(done[i].context, i + 1);
    EXPECT_EQ(done[i].status.code(), absl::StatusCode::kCancelled) << done[i].status;
  }
  EXPECT_EQ(cluster.worker(1).outstanding(), 0u);
  // Their scheduled events find nothing to do.
  cluster.network.RunUntilIdle();
  Completion out[4];
  EXPECT_EQ(cluster.worker(1).Poll(out), 0u);
}

TEST(SimFabricTest, UnflushedOperationExpiresOnceVirtualTimePassesItsDeadline) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  uint64_t word = 0;
  ASSERT_OK(link.endpoint->PostRead(link.remote, 0, &word, 8, 1));
  // Polling alone does not move time for an operation that was never sent.
  Completion out[2];
  EXPECT_EQ(cluster.worker(1).Poll(out), 0u);
  cluster.network.Advance(absl::Milliseconds(100));
  ASSERT_EQ(cluster.worker(1).Poll(out), 1u);
  EXPECT_EQ(out[0].status.code(), absl::StatusCode::kDeadlineExceeded) << out[0].status;
  EXPECT_EQ(link.endpoint->health().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(cluster.network.stats().timed_out, 1u);
}

TEST(SimFabricTest, WaitReturnsOnSignalOrTimeout) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(1, 4096));
  Worker& worker = cluster.worker(1);

  absl::Time start = absl::Now();
  worker.Wait(absl::Milliseconds(20));  // nothing pending anywhere: sleeps for the timeout
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(15));

  std::thread signaler([&worker] {
    absl::SleepFor(absl::Milliseconds(20));
    worker.Signal();
  });
  start = absl::Now();
  worker.Wait(absl::Seconds(30));
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  signaler.join();

  // Pending events: Wait runs them instead of sleeping.
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 1));
  uint64_t word = 0;
  ASSERT_OK(link.endpoint->PostRead(link.remote, 0, &word, 8, 1));
  ASSERT_OK(link.endpoint->Flush());
  start = absl::Now();
  worker.Wait(absl::Seconds(30));
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  Completion out[1];
  EXPECT_EQ(worker.Poll(out), 1u);
}

// A scripted run with every kind of randomness; its trace must be a function of the seed alone.
std::string Trace(uint64_t seed) {
  SimOptions options = TestOptions(seed);
  options.drop_probability = 0.1;
  options.torn_copies = true;
  options.max_torn_chunk = 16;
  options.max_latency = absl::Microseconds(50);
  SimCluster cluster(options);
  EXPECT_TRUE(cluster.Start(4, 4096).ok());
  std::vector<Link> links;
  for (uint32_t to = 2; to <= 4; ++to) {
    absl::StatusOr<Link> link = cluster.Connect(1, to);
    EXPECT_TRUE(link.ok());
    if (!link.ok()) return "";
    links.push_back(std::move(*link));
  }
  std::vector<uint64_t> scratch(3 * 60 * 8);
  std::string trace;
  uint64_t context = 0;
  for (int round = 0; round < 3; ++round) {
    for (Link& link : links) {
      for (int i = 0; i < 20; ++i, ++context) {
        uint64_t* buf = &scratch[context * 8 % scratch.size()];
        absl::Status s;
        switch (context % 3) {
          case 0: s = link.endpoint->PostWrite(link.remote, (context % 50) * 64, buf, 64, context); break;
          case 1: s = link.endpoint->PostRead(link.remote, (context % 50) * 64, buf, 64, context); break;
          default: s = link.endpoint->PostFetchAdd(link.remote, 8 * (context % 4), 1, buf, context); break;
        }
        EXPECT_TRUE(s.ok()) << s;
      }
      EXPECT_TRUE(link.endpoint->Flush().ok());
    }
    Completion out[7];  // an odd batch size, to exercise partial Polls
    for (size_t got = 0, polls = 0; got < 60; ++polls) {
      if (polls > 100000) {
        ADD_FAILURE() << "run stalled after " << got << " completions";
        return trace;
      }
      size_t n = cluster.worker(1).Poll(out);
      for (size_t i = 0; i < n; ++i) {
        absl::StrAppend(&trace, out[i].context, ":", static_cast<int>(out[i].status.code()), "@",
                        absl::ToInt64Nanoseconds(cluster.network.clock().Now() - absl::UnixEpoch()), " ");
      }
      got += n;
    }
  }
  SimNetwork::Stats stats = cluster.network.stats();
  absl::StrAppend(&trace, "dropped=", stats.dropped, " chunks=", stats.torn_chunks);
  return trace;
}

TEST(SimFabricTest, SameSeedSameRunOtherSeedOtherRun) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::string first = Trace(seed);
  EXPECT_EQ(first, Trace(seed));
  EXPECT_NE(first, Trace(seed + 1));
}

}  // namespace
}  // namespace fathom::fabric::sim
