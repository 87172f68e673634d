// SimFabric fault injection: drops, partitions, crashes, torn copies, deregistered regions.
#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/fabric/sim/sim_test_cluster.h"
#include "platform/fabric/sim/test_seed.h"

namespace fathom::fabric::sim {
namespace {

std::vector<Completion> SortedByContext(std::vector<Completion> done) {
  std::sort(done.begin(), done.end(), [](const Completion& a, const Completion& b) { return a.context < b.context; });
  return done;
}

TEST(SimFaultsTest, DropsFailSingleOperationsAndAreCounted) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimOptions options = TestOptions(seed);
  options.drop_probability = 0.3;
  SimCluster cluster(options);
  ASSERT_OK(cluster.Start(2, 8 * 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  constexpr uint64_t kOps = 400;
  std::vector<uint64_t> values(kOps);
  for (uint64_t i = 0; i < kOps; ++i) {
    values[i] = i + 1;
    ASSERT_OK(link.endpoint->PostWrite(link.remote, 8 * i, &values[i], 8, i));
  }
  ASSERT_OK(link.endpoint->Flush());
  std::vector<Completion> done = Collect(cluster.worker(1), kOps);
  ASSERT_EQ(done.size(), kOps);
  const uint64_t* slots = reinterpret_cast<const uint64_t*>(cluster.region(2).data());
  uint64_t failed = 0;
  for (const Completion& c : done) {
    if (c.status.ok()) {
      EXPECT_EQ(slots[c.context], c.context + 1);
      continue;
    }
    ++failed;
    EXPECT_EQ(c.status.code(), absl::StatusCode::kUnavailable) << c.status;
    EXPECT_NE(c.status.message().find("dropped"), absl::string_view::npos) << c.status;
    EXPECT_EQ(slots[c.context], 0u) << "a dropped write reached memory";
  }
  EXPECT_GT(failed, 0u);
  EXPECT_LT(failed, kOps);
  EXPECT_EQ(cluster.network.stats().dropped, failed);
  EXPECT_EQ(cluster.network.stats().operations, kOps);
  ASSERT_OK(link.endpoint->health());  // a drop fails the operation, not the endpoint

  cluster.network.set_drop_probability(0);
  for (uint64_t i = 0; i < 50; ++i) ASSERT_OK(link.endpoint->PostWrite(link.remote, 8 * i, &values[i], 8, i));
  ASSERT_OK(link.endpoint->Flush());
  for (const Completion& c : Collect(cluster.worker(1), 50)) EXPECT_TRUE(c.status.ok()) << c.status;
  EXPECT_EQ(cluster.network.stats().dropped, failed);
}

TEST(SimFaultsTest, PartitionTimesOutAtTheDeadlineAndFailsTheEndpoint) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const SimOptions options = TestOptions(seed);
  SimCluster cluster(options);
  ASSERT_OK(cluster.Start(3, 4096));
  ASSERT_OK_AND_ASSIGN(Link to2, cluster.Connect(1, 2));
  ASSERT_OK_AND_ASSIGN(Link to3, cluster.Connect(1, 3));
  ASSERT_OK_AND_ASSIGN(Link back, cluster.Connect(2, 1));
  uint64_t words[5] = {};

  const absl::Time posted = cluster.network.clock().Now();
  for (uint64_t i = 0; i < 3; ++i) ASSERT_OK(to2.endpoint->PostRead(to2.remote, 8 * i, &words[i], 8, i));
  ASSERT_OK(to2.endpoint->Flush());
  cluster.network.Partition(2, 1);  // while the reads are in flight

  // Other pairs are unaffected.
  ASSERT_OK(to3.endpoint->PostRead(to3.remote, 0, &words[3], 8, 100));
  Completion other = FlushAndCollectOne(cluster.worker(1), *to3.endpoint);
  EXPECT_EQ(other.context, 100u);
  ASSERT_OK(other.status);
  EXPECT_LT(cluster.network.clock().Now() - posted, options.fabric.operation_timeout);

  std::vector<Completion> done = SortedByContext(Collect(cluster.worker(1), 3));
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].status.code(), absl::StatusCode::kDeadlineExceeded) << done[0].status;
  EXPECT_EQ(done[1].status.code(), absl::StatusCode::kUnavailable) << done[1].status;
  EXPECT_EQ(done[2].status.code(), absl::StatusCode::kUnavailable) << done[2].status;
  // At the deadline, in virtual time.
  EXPECT_EQ(cluster.network.clock().Now(), posted + options.fabric.operation_timeout);
  EXPECT_EQ(to2.endpoint->health().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(to2.endpoint->PostRead(to2.remote, 0, &words[0], 8, 7).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(to2.endpoint->Flush().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(cluster.network.stats().timed_out, 1u);
  EXPECT_EQ(cluster.worker(1).outstanding(), 0u);

  // The other direction is cut too, for operations posted during the partition.
  ASSERT_OK(back.endpoint->PostRead(back.remote, 0, &words[4], 8, 200));
  EXPECT_EQ(FlushAndCollectOne(cluster.worker(2), *back.endpoint).status.code(),
            absl::StatusCode::kDeadlineExceeded);

  // Healing does not revive a failed endpoint; a new connection works.
  cluster.network.Heal(1, 2);
  EXPECT_EQ(to2.endpoint->health().code(), absl::StatusCode::kDeadlineExceeded);
  ASSERT_OK_AND_ASSIGN(Link again, cluster.Connect(1, 2));
  ASSERT_OK(again.endpoint->PostRead(again.remote, 0, &words[0], 8, 300));
  ASSERT_OK(FlushAndCollectOne(cluster.worker(1), *again.endpoint).status);
  ASSERT_OK(again.endpoint->health());
}

TEST(SimFaultsTest, HealBeforeDeliveryLosesNothing) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  uint64_t word = 0;
  cluster.network.Partition(1, 2);
  ASSERT_OK(link.endpoint->PostRead(link.remote, 0, &word, 8, 1));
  cluster.network.Heal(1, 2);  // before anything was sent
  ASSERT_OK(FlushAndCollectOne(cluster.worker(1), *link.endpoint).status);
}

TEST(SimFaultsTest, CrashFailsPendingAndNewOperations) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(3, 4096));
  ASSERT_OK_AND_ASSIGN(Link to2, cluster.Connect(1, 2));
  ASSERT_OK_AND_ASSIGN(Link to3, cluster.Connect(1, 3));
  ASSERT_OK_AND_ASSIGN(Link idle, cluster.Connect(3, 2));
  ASSERT_OK_AND_ASSIGN(Link from2, cluster.Connect(2, 1));
  uint64_t words[8] = {};
  ASSERT_OK(to2.endpoint->PostRead(to2.remote, 0, &words[0], 8, 1));
  ASSERT_OK(to2.endpoint->PostRead(to2.remote, 8, &words[1], 8, 2));
  ASSERT_OK(to2.endpoint->Flush());
  ASSERT_OK(to2.endpoint->PostRead(to2.remote, 16, &words[2], 8, 3));  // not yet flushed
  ASSERT_OK(from2.endpoint->PostRead(from2.remote, 0, &words[3], 8, 4));
  ASSERT_OK(from2.endpoint->Flush());
  std::memset(cluster.region(2).data(), 0x5a, 64);

  cluster.network.Crash(2);
  // Pending operations to the crashed node fail at once, in post order.
  Completion out[8];
  ASSERT_EQ(cluster.worker(1).Poll(out), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].context, i + 1);
    EXPECT_EQ(out[i].status.code(), absl::StatusCode::kUnavailable) << out[i].status;
  }
  // So do the crashed node's own workers' operations.
  ASSERT_EQ(cluster.worker(2).Poll(out), 1u);
  EXPECT_EQ(out[0].status.code(), absl::StatusCode::kUnavailable) << out[0].status;
  // Every endpoint to or from it is failed, busy or not; new posts are refused.
  EXPECT_EQ(to2.endpoint->health().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(idle.endpoint->health().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(from2.endpoint->health().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(to2.endpoint->PostRead(to2.remote, 0, &words[0], 8, 5).code(), absl::StatusCode::kUnavailable);
  cluster.network.RunUntilIdle();  // the scheduled deliveries find nothing to do
  EXPECT_EQ(cluster.worker(1).Poll(out), 0u);

  // Connecting to the crashed node works, but its operations fail.
  ASSERT_OK_AND_ASSIGN(Link late, cluster.Connect(1, 2));
  ASSERT_OK(late.endpoint->PostRead(late.remote, 0, &words[6], 8, 6));
  EXPECT_EQ(FlushAndCollectOne(cluster.worker(1), *late.endpoint).status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(late.endpoint->health().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(words[6], 0u);

  // The rest of the cluster carries on.
  ASSERT_OK(to3.endpoint->health());
  ASSERT_OK(to3.endpoint->PostRead(to3.remote, 0, &words[7], 8, 7));
  ASSERT_OK(FlushAndCollectOne(cluster.worker(1), *to3.endpoint).status);
  EXPECT_EQ(cluster.worker(1).outstanding(), 0u);
}

// A writer endpoint rewrites a 4 KiB buffer with whole-buffer patterns while a reader endpoint (another
// node) reads it. Returns how many reads saw more than one pattern; `torn_words` (if given) counts aligned
// 8-byte words seen with bytes of two patterns, which real fabrics never show.
int CountMixedReads(uint64_t seed, bool torn_copies, SimNetwork::Stats* stats, int* torn_words = nullptr) {
  SimOptions options = TestOptions(seed);
  options.torn_copies = torn_copies;
  options.max_torn_chunk = 64;
  SimCluster cluster(options);
  EXPECT_TRUE(cluster.Start(3, 4096).ok());
  absl::StatusOr<Link> writer = cluster.Connect(1, 2);
  absl::StatusOr<Link> reader = cluster.Connect(3, 2);
  EXPECT_TRUE(writer.ok() && reader.ok());
  if (!writer.ok() || !reader.ok()) return -1;
  std::vector<uint8_t> pattern(4096), seen(4096);
  int mixed = 0;
  for (int round = 0; round < 100; ++round) {
    std::fill(pattern.begin(), pattern.end(), static_cast<uint8_t>(round + 1));
    EXPECT_TRUE(writer->endpoint->PostWrite(writer->remote, 0, pattern.data(), pattern.size(), round).ok());
    EXPECT_TRUE(reader->endpoint->PostRead(reader->remote, 0, seen.data(), seen.size(), round).ok());
    EXPECT_TRUE(writer->endpoint->Flush().ok());
    EXPECT_TRUE(reader->endpoint->Flush().ok());
    // One thread drives both nodes' workers.
    size_t written = 0, read = 0;
    Completion out[1];
    for (int polls = 0; written + read < 2 && polls < 100000; ++polls) {
      if (cluster.worker(1).Poll(out) == 1) {
        EXPECT_TRUE(out[0].status.ok()) << out[0].status;
        ++written;
      }
      if (cluster.worker(3).Poll(out) == 1) {
        EXPECT_TRUE(out[0].status.ok()) << out[0].status;
        ++read;
      }
    }
    EXPECT_EQ(written + read, 2u);
    std::set<uint8_t> values(seen.begin(), seen.end());
    if (values.size() > 1) ++mixed;
    for (size_t word = 0; torn_words != nullptr && word < seen.size(); word += 8) {
      if (std::set<uint8_t>(seen.begin() + word, seen.begin() + word + 8).size() > 1) ++*torn_words;
    }
  }
  *stats = cluster.network.stats();
  return mixed;
}

TEST(SimFaultsTest, TornCopiesShowRacingReadersMixedBytes) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimNetwork::Stats stats;
  EXPECT_GT(CountMixedReads(seed, /*torn_copies=*/true, &stats), 0);
  EXPECT_GT(stats.torn_chunks, 0u);
  EXPECT_EQ(CountMixedReads(seed, /*torn_copies=*/false, &stats), 0);
  EXPECT_EQ(stats.torn_chunks, 0u);
}

TEST(SimFaultsTest, TornCopiesNeverTearAnAlignedWord) {
  // The object layer reads a slot's version word (lock bit and version together) in one piece; a fabric
  // that tore it could show a locked object's old bytes as a valid unlocked copy.
  const uint64_t seed = TestSeed();
  SimNetwork::Stats stats;
  int torn_words = 0;
  EXPECT_GT(CountMixedReads(seed, /*torn_copies=*/true, &stats, &torn_words), 0);
  EXPECT_EQ(torn_words, 0);
}

TEST(SimFaultsTest, TornCopiesStillMoveEveryByte) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimOptions options = TestOptions(seed);
  options.torn_copies = true;
  options.max_torn_chunk = 7;
  SimCluster cluster(options);
  ASSERT_OK(cluster.Start(2, 8192));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  std::vector<uint8_t> source(5000), back(5000);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<uint8_t>(i * 31 + 7);
  ASSERT_OK(link.endpoint->PostWrite(link.remote, 1001, source.data(), source.size(), 1));
  ASSERT_OK(link.endpoint->PostRead(link.remote, 1001, back.data(), back.size(), 2));  // same endpoint: after it
  ASSERT_OK(link.endpoint->Flush());
  for (const Completion& c : Collect(cluster.worker(1), 2)) EXPECT_TRUE(c.status.ok()) << c.status;
  EXPECT_EQ(back, source);
  EXPECT_EQ(std::memcmp(cluster.region(2).data() + 1001, source.data(), source.size()), 0);
}

TEST(SimFaultsTest, OperationsOnADestroyedRegionFail) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Region> spare, cluster.fabric(2).AllocateRegion(4096));
  ASSERT_OK_AND_ASSIGN(RemoteRegion spare_remote, link.endpoint->ImportRegion(spare->descriptor()));
  cluster.DestroyRegion(2);

  uint64_t word = 1;
  ASSERT_OK(link.endpoint->PostWrite(link.remote, 0, &word, 8, 1));
  EXPECT_EQ(FlushAndCollectOne(cluster.worker(1), *link.endpoint).status.code(), absl::StatusCode::kNotFound);
  ASSERT_OK(link.endpoint->PostFetchAdd(link.remote, 0, 1, &word, 2));
  EXPECT_EQ(FlushAndCollectOne(cluster.worker(1), *link.endpoint).status.code(), absl::StatusCode::kNotFound);
  // The endpoint and the node's other regions are fine.
  ASSERT_OK(link.endpoint->health());
  ASSERT_OK(link.endpoint->PostWrite(spare_remote, 0, &word, 8, 3));
  ASSERT_OK(FlushAndCollectOne(cluster.worker(1), *link.endpoint).status);
}

TEST(SimFaultsTest, DeregisteredCallerMemoryIsNeverTouched) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  auto memory = std::make_unique<std::vector<uint64_t>>(512);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Region> region,
                       cluster.fabric(2).RegisterRegion(memory->data(), memory->size() * 8));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Endpoint> ep, cluster.worker(1).Connect(cluster.worker(2).address()));
  ASSERT_OK_AND_ASSIGN(RemoteRegion remote, ep->ImportRegion(region->descriptor()));
  uint64_t word = 9;
  ASSERT_OK(ep->PostWrite(remote, 0, &word, 8, 1));
  ASSERT_OK(ep->Flush());
  // Deregistered and freed while the write is in flight (ASan catches any late copy).
  region.reset();
  memory.reset();
  std::vector<Completion> done = Collect(cluster.worker(1), 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status.code(), absl::StatusCode::kNotFound) << done[0].status;
}

TEST(SimFaultsTest, DestroyingARegionDuringATornCopyFailsTheCopy) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimOptions options = TestOptions(seed);
  options.torn_copies = true;
  SimCluster cluster(options);
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  std::vector<uint8_t> source(4096, 0xee);
  ASSERT_OK(link.endpoint->PostWrite(link.remote, 0, source.data(), source.size(), 1));
  ASSERT_OK(link.endpoint->Flush());
  // At least 64 chunks spread over max_latency: stepping a tenth of it stops in the middle of the copy.
  for (int i = 0; i < 1000 && cluster.network.stats().torn_chunks == 0; ++i) {
    cluster.network.Advance(options.max_latency / 10);
  }
  ASSERT_GT(cluster.network.stats().torn_chunks, 0u);
  cluster.DestroyRegion(2);  // frees the memory the remaining chunks would have written
  std::vector<Completion> done = Collect(cluster.worker(1), 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status.code(), absl::StatusCode::kNotFound) << done[0].status;
}

}  // namespace
}  // namespace fathom::fabric::sim
