#include "kv/study/linear_probing_table.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kv/study/probe_study.h"
#include "platform/base/status_test_macros.h"

namespace fathom::kv::study {
namespace {

TEST(LinearProbingTableTest, EveryInsertedKeyIsFoundAtItsProbeDistance) {
  constexpr size_t kCapacity = 1000;
  LinearProbingTable table(kCapacity, /*seed=*/7);
  const std::vector<uint64_t> keys = StudyKeys(900, /*seed=*/7);
  for (uint64_t key : keys) ASSERT_OK(table.Insert(key));
  EXPECT_EQ(table.size(), keys.size());
  for (size_t index = 0; index < kCapacity; ++index) {
    const Slot& slot = table.slot(index);
    if (!slot.occupied) continue;
    const LookupResult result = table.Lookup(slot.key);
    ASSERT_TRUE(result.found);
    // One probe per slot from the home slot to the key's slot, both included.
    EXPECT_EQ(result.probes, static_cast<int>(RingDistance(table.HomeSlot(slot.key), index, kCapacity)) + 1);
  }
  for (uint64_t key : keys) {
    const LookupResult result = table.Lookup(key);
    EXPECT_TRUE(result.found);
    EXPECT_GE(result.probes, 1);
    EXPECT_LE(result.probes, static_cast<int>(kCapacity));
  }
}

TEST(LinearProbingTableTest, MissStopsAtTheFirstEmptySlot) {
  LinearProbingTable table(100, /*seed=*/1);
  const LookupResult empty = table.Lookup(42);
  EXPECT_FALSE(empty.found);
  EXPECT_EQ(empty.probes, 1);
  for (uint64_t key : StudyKeys(50, /*seed=*/1)) ASSERT_OK(table.Insert(key));
  uint64_t absent = 1;
  while (table.Lookup(absent).found) ++absent;
  const LookupResult miss = table.Lookup(absent);
  EXPECT_FALSE(miss.found);
  EXPECT_FALSE(table.slot((table.HomeSlot(absent) + miss.probes - 1) % 100).occupied);
}

TEST(LinearProbingTableTest, DuplicateIsRejected) {
  LinearProbingTable table(16, /*seed=*/1);
  ASSERT_OK(table.Insert(5));
  EXPECT_EQ(table.Insert(5).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(table.size(), 1u);
}

TEST(LinearProbingTableTest, FullTableFailsAndKeepsEveryKey) {
  constexpr size_t kCapacity = 64;
  LinearProbingTable table(kCapacity, /*seed=*/3);
  const std::vector<uint64_t> keys = StudyKeys(kCapacity + 1, /*seed=*/3);
  for (size_t i = 0; i < kCapacity; ++i) ASSERT_OK(table.Insert(keys[i]));
  EXPECT_EQ(table.Insert(keys[kCapacity]).code(), absl::StatusCode::kResourceExhausted);
  for (size_t i = 0; i < kCapacity; ++i) EXPECT_TRUE(table.Lookup(keys[i]).found);
  const LookupResult miss = table.Lookup(keys[kCapacity]);
  EXPECT_FALSE(miss.found);
  EXPECT_EQ(miss.probes, static_cast<int>(kCapacity));
}

}  // namespace
}  // namespace fathom::kv::study
