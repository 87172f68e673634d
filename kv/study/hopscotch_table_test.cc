#include "kv/study/hopscotch_table.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kv/study/probe_study.h"
#include "platform/base/status_test_macros.h"

namespace fathom::kv::study {
namespace {

// The hopscotch invariant: every stored key is within H slots of its home.
void ExpectNeighbourhoodInvariant(const HopscotchTable& table) {
  size_t occupied = 0;
  for (size_t index = 0; index < table.capacity(); ++index) {
    const Slot& slot = table.slot(index);
    if (!slot.occupied) continue;
    ++occupied;
    ASSERT_LT(RingDistance(table.HomeSlot(slot.key), index, table.capacity()), table.neighbourhood())
        << "key " << slot.key << " at slot " << index;
  }
  EXPECT_EQ(occupied, table.size());
}

TEST(HopscotchTableTest, EveryInsertedKeyIsFoundInOneRead) {
  HopscotchTable table(10'000, /*seed=*/4);
  EXPECT_EQ(table.neighbourhood(), 8u);
  // 70%: plain hopscotch with H = 8 already fails a few inserts here (a window of slots gets more keys than
  // it and the next H - 1 slots can hold; docs/kv-probes.md), so only the stored keys must be found.
  std::vector<uint64_t> stored;
  for (uint64_t key : StudyKeys(7'000, /*seed=*/4)) {
    if (table.Insert(key).ok()) stored.push_back(key);
  }
  EXPECT_GT(stored.size(), 6'930u);  // under 1% failed
  EXPECT_EQ(table.size(), stored.size());
  EXPECT_GT(table.moves(), 0u);
  ExpectNeighbourhoodInvariant(table);
  for (uint64_t key : stored) {
    const LookupResult result = table.Lookup(key);
    EXPECT_TRUE(result.found);
    EXPECT_EQ(result.probes, 1);
  }
  const LookupResult miss = table.Lookup(stored.front() ^ 1);
  EXPECT_FALSE(miss.found);
  EXPECT_EQ(miss.probes, 1);
}

TEST(HopscotchTableTest, InvariantHoldsAfterEveryInsertUpToFailure) {
  // A small table (so neighbourhoods wrap around its end) filled until inserts fail.
  constexpr size_t kCapacity = 400;
  HopscotchTable table(kCapacity, /*seed=*/8);
  std::vector<uint64_t> stored;
  int failures = 0;
  for (uint64_t key : StudyKeys(kCapacity, /*seed=*/8)) {
    const absl::Status status = table.Insert(key);
    if (status.ok()) {
      stored.push_back(key);
    } else {
      ASSERT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
      EXPECT_FALSE(table.Lookup(key).found);
      ++failures;
    }
    ExpectNeighbourhoodInvariant(table);
    for (uint64_t k : stored) ASSERT_TRUE(table.Lookup(k).found) << k;
  }
  EXPECT_GT(failures, 0);
  EXPECT_EQ(table.size(), stored.size());
}

TEST(HopscotchTableTest, ShortProbeDistanceFailsEarlier) {
  const std::vector<uint64_t> keys = StudyKeys(900, /*seed=*/6);
  auto failures = [&](int distance) {
    HopscotchTable table(1000, /*seed=*/6, HopscotchOptions{.neighbourhood = 8, .max_probe_distance = distance});
    int failed = 0;
    for (uint64_t key : keys) failed += table.Insert(key).ok() ? 0 : 1;
    return failed;
  };
  EXPECT_GT(failures(8), failures(512));
}

TEST(HopscotchTableTest, TinyTableShrinksTheNeighbourhoodAndRejectsDuplicates) {
  HopscotchTable table(6, /*seed=*/1);
  EXPECT_EQ(table.neighbourhood(), 3u);
  ASSERT_OK(table.Insert(10));
  EXPECT_EQ(table.Insert(10).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(table.size(), 1u);
}

}  // namespace
}  // namespace fathom::kv::study
