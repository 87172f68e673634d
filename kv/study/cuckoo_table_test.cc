#include "kv/study/cuckoo_table.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kv/study/probe_study.h"
#include "platform/base/status_test_macros.h"

namespace fathom::kv::study {
namespace {

// Every key sits at one of its candidates, and a lookup costs the index of the first candidate holding it.
void ExpectFoundAtCandidate(const CuckooTable& table, uint64_t key) {
  const LookupResult result = table.Lookup(key);
  ASSERT_TRUE(result.found) << key;
  ASSERT_GE(result.probes, 1);
  ASSERT_LE(result.probes, CuckooTable::kWays);
  const auto candidates = table.Candidates(key);
  bool at_candidate = false;
  for (size_t candidate : candidates) {
    at_candidate |= table.slot(candidate).occupied && table.slot(candidate).key == key;
  }
  EXPECT_TRUE(at_candidate) << key;
}

TEST(CuckooTableTest, EveryInsertedKeyIsFoundWithinThreeProbes) {
  CuckooTable table(10'000, /*seed=*/11);
  const std::vector<uint64_t> keys = StudyKeys(8'500, /*seed=*/11);
  for (uint64_t key : keys) ASSERT_OK(table.Insert(key));
  EXPECT_EQ(table.size(), keys.size());
  EXPECT_GT(table.moves(), 0u);  // 85% needs displacements
  for (uint64_t key : keys) ExpectFoundAtCandidate(table, key);
}

TEST(CuckooTableTest, NoKeyIsLostDuringDisplacement) {
  // A small table filled past 3-way cuckoo's load threshold (~92%), so paths get long and inserts fail.
  constexpr size_t kCapacity = 500;
  CuckooTable table(kCapacity, /*seed=*/5);
  std::vector<uint64_t> stored;
  uint64_t checked_moves = 0;
  table.set_move_observer([&] {
    ++checked_moves;
    for (uint64_t key : stored) ASSERT_TRUE(table.Lookup(key).found) << "lost " << key << " mid-displacement";
  });
  int failures = 0;
  for (uint64_t key : StudyKeys(kCapacity, /*seed=*/5)) {
    const size_t size_before = table.size();
    const absl::Status status = table.Insert(key);
    if (status.ok()) {
      stored.push_back(key);
    } else {
      ASSERT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
      EXPECT_EQ(table.size(), size_before);
      EXPECT_FALSE(table.Lookup(key).found);
      ++failures;
    }
    for (uint64_t k : stored) ExpectFoundAtCandidate(table, k);
  }
  EXPECT_EQ(checked_moves, table.moves());
  EXPECT_GT(table.moves(), 0u);
  EXPECT_GT(failures, 0);
  EXPECT_EQ(table.size(), stored.size());
}

TEST(CuckooTableTest, TinySearchLimitFailsEarlierThanLargeOne) {
  const std::vector<uint64_t> keys = StudyKeys(950, /*seed=*/9);
  auto failures = [&](int limit) {
    CuckooTable table(1000, /*seed=*/9, CuckooOptions{.max_search_slots = limit});
    int failed = 0;
    for (uint64_t key : keys) failed += table.Insert(key).ok() ? 0 : 1;
    return failed;
  };
  EXPECT_GT(failures(3), failures(500));
}

TEST(CuckooTableTest, MissReadsEveryCandidateAndDuplicateIsRejected) {
  CuckooTable table(1000, /*seed=*/2);
  const LookupResult miss = table.Lookup(77);
  EXPECT_FALSE(miss.found);
  auto candidates = table.Candidates(77);
  std::sort(candidates.begin(), candidates.end());
  EXPECT_EQ(miss.probes, std::unique(candidates.begin(), candidates.end()) - candidates.begin());
  ASSERT_OK(table.Insert(77));
  EXPECT_EQ(table.Lookup(77).probes, 1);  // first free candidate of an empty table
  EXPECT_EQ(table.Insert(77).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(table.size(), 1u);
}

}  // namespace
}  // namespace fathom::kv::study
