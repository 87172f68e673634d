// Readers never accept a torn object: writers rewrite objects (64 B to 64 KiB slots) with self-describing
// patterns while readers on other nodes or processes read them one-sidedly. Every accepted payload is
// checked against the pattern; the torn and locked copies that were detected and retried are counted.
#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/base/hex.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/fabric/sim/test_seed.h"
#include "platform/fabric/testing/ucx_env.h"
#include "platform/object/object_reader.h"
#include "platform/object/object_store.h"
#include "platform/object/testing/object_pattern.h"

namespace fathom::object {
namespace {

// SimFabric with torn copies, driven from one thread: the owner rewrites and locks objects between the
// chunk events of readers' copies, so copies tear deterministically for a seed.
TEST(ObjectStressTest, SimTornCopiesAreNeverAccepted) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  fabric::sim::SimOptions options;
  options.seed = seed;
  options.torn_copies = true;
  options.max_torn_chunk = 48;
  options.max_latency = absl::Microseconds(20);
  fabric::sim::SimNetwork network(options);
  auto owner_fabric = network.AddNode(1);
  auto reader_fabric = network.AddNode(2);
  ASSERT_TRUE(owner_fabric.ok() && reader_fabric.ok());
  auto region = memory::LocalRegion::Allocate(**owner_fabric, 1, 1, 16 << 20);
  ASSERT_TRUE(region.ok());
  memory::SlabSource source({region->get()});
  memory::SlabAllocator allocator(&source);
  ObjectStore store({region->get()}, &allocator);
  std::vector<ObjectRef> refs;
  std::vector<std::byte> payload;
  for (uint32_t size : {32u, 200u, 1000u, 4000u, 16000u, 65000u, 32u, 200u}) {
    auto ref = store.Allocate(size);
    ASSERT_TRUE(ref.ok());
    testing::FillPattern(refs.size(), 0, ref->payload_capacity(), payload);
    ASSERT_TRUE(store.Write(*ref, payload).ok());
    refs.push_back(*ref);
  }
  auto owner_worker = (*owner_fabric)->CreateWorker();
  auto worker = (*reader_fabric)->CreateWorker();
  ASSERT_TRUE(owner_worker.ok() && worker.ok());
  auto ep = (*worker)->Connect((*owner_worker)->address());
  ASSERT_TRUE(ep.ok());
  auto remote = (*ep)->ImportRegion((*region)->info().descriptor);
  ASSERT_TRUE(remote.ok());

  std::mt19937_64 rng(seed);
  constexpr int kOutstanding = 4;
  std::vector<std::vector<std::byte>> buffers(kOutstanding);
  std::vector<int> reading(kOutstanding, -1);
  uint64_t generation = 1, accepted = 0, torn = 0, locked = 0, bad = 0;
  std::optional<std::pair<int, uint64_t>> held;  // an object the owner keeps locked for a while
  auto post = [&](int slot) {
    reading[slot] = static_cast<int>(rng() % refs.size());
    buffers[slot].resize(refs[reading[slot]].capacity);
    ASSERT_TRUE((*ep)->PostRead(*remote, refs[reading[slot]].address.offset, buffers[slot].data(),
                                buffers[slot].size(), slot)
                    .ok());
  };
  for (int slot = 0; slot < kOutstanding; ++slot) post(slot);
  ASSERT_TRUE((*ep)->Flush().ok());
  fabric::Completion done[8];
  while (accepted < 3000) {
    // The owner acts between events: rewrite an object, or take or release a long-held lock.
    const int i = static_cast<int>(rng() % refs.size());
    auto object = store.Resolve(refs[i]);
    ASSERT_TRUE(object.ok());
    if (held.has_value() && rng() % 4 == 0) {
      auto held_object = store.Resolve(refs[held->first]);
      testing::FillPattern(held->first, generation++, refs[held->first].payload_capacity(), payload);
      held_object->InstallAndUnlock(held->second, payload, refs[held->first].incarnation, kLiveFlag);
      held.reset();
    } else if (!held.has_value() && rng() % 8 == 0) {
      auto version = object->TryLock();
      if (version.ok()) held = {i, *version};
    } else if (!held.has_value() || held->first != i) {
      testing::FillPattern(i, generation++, refs[i].payload_capacity(), payload);
      ASSERT_TRUE(store.Write(refs[i], payload).ok());
    }
    size_t n = (*worker)->Poll(done);
    for (size_t k = 0; k < n; ++k) {
      ASSERT_TRUE(done[k].status.ok()) << done[k].status;
      const int slot = static_cast<int>(done[k].context);
      const int object_index = reading[slot];
      ObjectCheck check = CheckObjectCopy(buffers[slot], refs[object_index]);
      if (check.verdict == Verdict::kValid) {
        ++accepted;
        if (!testing::MatchesPattern(object_index, refs[object_index].payload_capacity(), check.payload)) ++bad;
      } else if (check.verdict == Verdict::kTorn) {
        ++torn;
      } else if (check.verdict == Verdict::kLocked) {
        ++locked;
      } else {
        ++bad;
      }
      post(slot);
    }
    if (n > 0) ASSERT_TRUE((*ep)->Flush().ok());
  }
  std::cerr << "[ info ] sim: " << accepted << " accepted, " << torn << " torn and " << locked
            << " locked copies detected and retried\n";
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(torn, 0u) << "no torn copy happened: the test lost its teeth";
  EXPECT_GT(locked, 0u);
}

std::vector<ObjectRef> ParseRefs(const std::string& hex) {
  std::string bytes;
  std::vector<ObjectRef> refs;
  if (!HexToBytes(hex, &bytes) || bytes.size() % 16 != 0) return refs;
  for (size_t i = 0; i < bytes.size(); i += 16) {
    uint64_t raw;
    ObjectRef ref;
    std::memcpy(&raw, bytes.data() + i, 8);
    std::memcpy(&ref.incarnation, bytes.data() + i + 8, 4);
    std::memcpy(&ref.capacity, bytes.data() + i + 12, 4);
    ref.address = memory::GlobalAddress::FromRaw(raw);
    refs.push_back(ref);
  }
  return refs;
}

// Two writer threads in another process, two reader threads here, over UCX shared memory.
TEST(ObjectStressTest, UcxSharedMemoryReadersNeverAcceptATornObject) {
  fabric::testing::UcxPeerEnv env("sm", "platform/object/object_peer", {"--writers=2"});
  absl::Status started = env.Start();
  ASSERT_TRUE(started.ok()) << started;
  ASSERT_EQ(env.ready_extra().size(), 1u);
  const std::vector<ObjectRef> refs = ParseRefs(env.ready_extra()[0]);
  ASSERT_FALSE(refs.empty());

  // A count, not a time window: the test checks correctness over millions of reads, not speed
  // (sanitizer builds run about ten times slower, so they check fewer). The deadline is only a backstop.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  constexpr uint64_t kTargetReads = 200'000;
#else
  constexpr uint64_t kTargetReads = 2'000'000;
#endif
  const absl::Time deadline = absl::Now() + absl::Seconds(200);
  std::atomic<uint64_t> reads{0}, bad{0}, torn{0}, locked{0}, errors{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      auto link = env.ConnectToPeer();
      if (!link.ok()) {
        ++errors;
        return;
      }
      std::mt19937_64 rng(r);
      std::vector<std::byte> buffer;
      ReadStats stats;
      ReadPolicy policy;
      while (reads.load(std::memory_order_relaxed) < kTargetReads && absl::Now() < deadline) {
        for (int batch = 0; batch < 256; ++batch) {
          // Small objects are read most, as in a key-value workload.
          const size_t i = rng() % 8 < 6 ? (rng() % (refs.size() / 6)) * 6 + rng() % 2 : rng() % refs.size();
          auto payload = ReadRemoteObject(*link->worker, *link->endpoint, link->remote, refs[i], buffer, policy,
                                          &stats);
          if (!payload.ok()) {
            ++errors;
            continue;
          }
          if (!testing::MatchesPattern(i, refs[i].payload_capacity(), *payload)) ++bad;
        }
        reads += 256;
      }
      torn += stats.torn_retries;
      locked += stats.locked_retries;
    });
  }
  for (auto& t : readers) t.join();
  std::cerr << "[ info ] UCX shm: " << reads << " reads accepted, " << torn << " torn and " << locked
            << " locked copies detected and retried, " << bad << " torn accepted\n";
  EXPECT_EQ(errors.load(), 0u);
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GE(reads.load(), kTargetReads);
  EXPECT_GT(torn.load() + locked.load(), 0u) << "no read ever raced a write: the test lost its teeth";
}

}  // namespace
}  // namespace fathom::object
