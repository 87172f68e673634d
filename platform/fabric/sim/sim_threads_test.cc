// SimFabric under several threads, each driving its own worker. Not deterministic, but always correct; run
// under --config=tsan.
#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/fabric/sim/sim_test_cluster.h"
#include "platform/fabric/sim/test_seed.h"

namespace fathom::fabric::sim {
namespace {

TEST(SimThreadsTest, ConcurrentFetchAddsCountExactly) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  constexpr uint32_t kThreads = 4;
  constexpr int kAddsPerThread = 400;
  constexpr int kBatch = 16;
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(kThreads + 1, 4096));  // node 1 holds the counter; nodes 2.. add
  std::vector<Link> links;
  for (uint32_t node = 2; node <= kThreads + 1; ++node) {
    ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(node, 1));
    links.push_back(std::move(link));
  }
  std::vector<std::vector<uint64_t>> olds(kThreads, std::vector<uint64_t>(kAddsPerThread));
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Worker& worker = cluster.worker(t + 2);
      Endpoint& ep = *links[t].endpoint;
      for (int done = 0; done < kAddsPerThread; done += kBatch) {
        for (int i = done; i < done + kBatch; ++i) {
          absl::Status s = ep.PostFetchAdd(links[t].remote, 64, 1, &olds[t][i], i);
          ASSERT_TRUE(s.ok()) << s;
        }
        ASSERT_TRUE(ep.Flush().ok());
        for (const Completion& c : Collect(worker, kBatch)) ASSERT_TRUE(c.status.ok()) << c.status;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  constexpr uint64_t kTotal = uint64_t{kThreads} * kAddsPerThread;
  EXPECT_EQ(__atomic_load_n(reinterpret_cast<uint64_t*>(cluster.region(1).data() + 64), __ATOMIC_SEQ_CST), kTotal);
  // Every add saw a distinct old value: together exactly 0 .. total-1.
  std::vector<uint64_t> all;
  for (const auto& v : olds) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  std::vector<uint64_t> expected(kTotal);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(all, expected);
}

// Each thread writes and reads back its own slice, with torn copies and drops on, retrying dropped
// operations, while the main thread flips a partition between two uninvolved nodes.
TEST(SimThreadsTest, ConcurrentReadersAndWritersWithFaults) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  constexpr uint32_t kThreads = 3;
  constexpr size_t kSlice = 1024;
  SimOptions options = TestOptions(seed);
  options.torn_copies = true;
  options.drop_probability = 0.05;
  SimCluster cluster(options);
  ASSERT_OK(cluster.Start(kThreads + 3, kThreads * kSlice));
  std::vector<Link> links;
  for (uint32_t t = 0; t < kThreads; ++t) {
    ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(t + 2, 1));
    links.push_back(std::move(link));
  }
  // Retries an operation until it is not dropped.
  auto run = [](Worker& worker, Endpoint& ep, auto post) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      absl::Status s = post();
      if (!s.ok()) return s;
      if (s = ep.Flush(); !s.ok()) return s;
      std::vector<Completion> done = Collect(worker, 1);
      if (done.size() != 1) return absl::InternalError("no completion");
      if (done[0].status.code() != absl::StatusCode::kUnavailable) return done[0].status;
    }
    return absl::UnavailableError("dropped 100 times");
  };
  std::atomic<bool> stop{false};
  std::thread faults([&] {
    const uint32_t a = kThreads + 2, b = kThreads + 3;
    while (!stop.load()) {
      cluster.network.Partition(a, b);
      absl::SleepFor(absl::Microseconds(100));
      cluster.network.Heal(a, b);
    }
  });
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Worker& worker = cluster.worker(t + 2);
      Endpoint& ep = *links[t].endpoint;
      std::vector<uint8_t> out(kSlice), in(kSlice);
      for (int round = 0; round < 30; ++round) {
        std::fill(out.begin(), out.end(), static_cast<uint8_t>(t * 64 + round));
        absl::Status s = run(worker, ep, [&] { return ep.PostWrite(links[t].remote, t * kSlice, out.data(), kSlice, 1); });
        ASSERT_TRUE(s.ok()) << s;
        s = run(worker, ep, [&] { return ep.PostRead(links[t].remote, t * kSlice, in.data(), kSlice, 2); });
        ASSERT_TRUE(s.ok()) << s;
        ASSERT_EQ(in, out) << "thread " << t << " round " << round;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  stop.store(true);
  faults.join();
  EXPECT_GT(cluster.network.stats().torn_chunks, 0u);
}

TEST(SimThreadsTest, CrashWhileThreadsOperateEndsEveryOperation) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  constexpr uint32_t kThreads = 3;
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(kThreads + 1, 4096));
  std::vector<Link> links;
  for (uint32_t t = 0; t < kThreads; ++t) {
    ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(t + 2, 1));
    links.push_back(std::move(link));
  }
  std::atomic<int> started{0};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Worker& worker = cluster.worker(t + 2);
      Endpoint& ep = *links[t].endpoint;
      uint64_t old[8];
      started.fetch_add(1);
      while (true) {
        int posted = 0;
        for (int i = 0; i < 8; ++i) {
          if (!ep.PostFetchAdd(links[t].remote, 0, 1, &old[i], i).ok()) break;
          ++posted;
        }
        if (posted == 0) break;  // the endpoint failed: refused with its status
        if (!ep.Flush().ok() && worker.outstanding() == 0) break;
        // Every accepted operation completes, successfully or not.
        std::vector<Completion> done = Collect(worker, posted);
        ASSERT_EQ(done.size(), static_cast<size_t>(posted));
      }
      EXPECT_EQ(ep.health().code(), absl::StatusCode::kUnavailable);
    });
  }
  while (started.load() < static_cast<int>(kThreads)) absl::SleepFor(absl::Microseconds(100));
  // Observers on another thread: virtual time only moves forward; stats only grow.
  absl::Time last = cluster.network.clock().Now();
  uint64_t operations = 0;
  for (const absl::Time stop = absl::Now() + absl::Milliseconds(5); absl::Now() < stop;) {
    const absl::Time now = cluster.network.clock().Now();
    EXPECT_GE(now, last);
    last = now;
    const uint64_t seen = cluster.network.stats().operations;
    EXPECT_GE(seen, operations);
    operations = seen;
  }
  cluster.network.Crash(1);
  for (std::thread& t : threads) t.join();
}

TEST(SimThreadsTest, WaitWakesWhenAnotherThreadCompletesItsOperation) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  SimCluster cluster(TestOptions(seed));
  ASSERT_OK(cluster.Start(2, 4096));
  ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));
  uint64_t word = 0;
  ASSERT_OK(link.endpoint->PostRead(link.remote, 0, &word, 8, 1));
  ASSERT_OK(link.endpoint->Flush());
  // Another thread runs the simulation (as another node's progress loop would); the waiter sees its
  // completion without running anything itself.
  std::thread runner([&] {
    absl::SleepFor(absl::Milliseconds(10));
    cluster.network.RunUntilIdle();
  });
  const absl::Time start = absl::Now();
  Completion out[1];
  size_t got = 0;
  while (got == 0 && absl::Now() - start < absl::Seconds(10)) {
    cluster.worker(1).Wait(absl::Seconds(10));
    got = cluster.worker(1).Poll(out);
  }
  runner.join();
  ASSERT_EQ(got, 1u);
  ASSERT_OK(out[0].status);
}

}  // namespace
}  // namespace fathom::fabric::sim
