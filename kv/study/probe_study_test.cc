#include "kv/study/probe_study.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fathom::kv::study {
namespace {

using ::testing::HasSubstr;

TEST(ProbeStudyTest, StudyKeysAreDistinctAndSeeded) {
  const std::vector<uint64_t> keys = StudyKeys(100'000, /*seed=*/1);
  const absl::flat_hash_set<uint64_t> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), keys.size());
  EXPECT_EQ(StudyKeys(10, 1), StudyKeys(10, 1));
  EXPECT_NE(StudyKeys(10, 1), StudyKeys(10, 2));
}

TEST(ProbeStudyTest, HashingIsSeeded) {
  EXPECT_NE(SeededHash(1, 1), SeededHash(1, 2));
  EXPECT_NE(DeriveSeed(1, 0), DeriveSeed(1, 1));
  for (uint64_t h : {uint64_t{0}, uint64_t{1}, ~uint64_t{0}}) EXPECT_LT(ReduceToRange(h, 7), 7u);
  EXPECT_EQ(RingDistance(5, 2, 8), 5u);
  EXPECT_EQ(RingDistance(2, 5, 8), 3u);
}

TEST(ProbeStudyTest, ProbeStatsAggregates) {
  ProbeStats stats;
  stats.Add({.found = true, .probes = 1});
  stats.Add({.found = true, .probes = 3});
  stats.Add({.found = false, .probes = 2});
  EXPECT_EQ(stats.lookups, 3u);
  EXPECT_DOUBLE_EQ(stats.average(), 2.0);
  EXPECT_EQ(stats.max_probes, 3);
  EXPECT_DOUBLE_EQ(stats.one_read_fraction(), 1.0 / 3);
  EXPECT_EQ(stats.not_found, 1u);
}

TEST(ProbeStudyTest, EverySchemeFindsEveryStoredKey) {
  const std::vector<uint64_t> keys = StudyKeys(20'000, /*seed=*/3);
  for (Scheme scheme : kAllSchemes) {
    for (double fill : {0.1, 0.5, 0.75}) {
      const StudyRow row = RunStudy(scheme, fill, keys, StudyOptions{.seed = 3});
      SCOPED_TRACE(SchemeName(scheme) + " at " + std::to_string(fill));
      EXPECT_EQ(row.capacity, static_cast<size_t>(keys.size() / fill + 0.5));
      if (fill <= 0.1) {
        EXPECT_EQ(row.failed_inserts, 0u);  // hopscotch (H = 8) fails a few from about 50% on
      }
      EXPECT_EQ(row.probes.lookups + row.failed_inserts, keys.size());
      EXPECT_EQ(row.probes.not_found, 0u);
      EXPECT_GE(row.probes.average(), 1.0);
    }
  }
}

TEST(ProbeStudyTest, AveragesMatchTheTheoryAtHalfFill) {
  const std::vector<uint64_t> keys = StudyKeys(50'000, /*seed=*/1);
  // Knuth: a successful linear-probing search costs (1 + 1 / (1 - a)) / 2 probes at load a.
  const StudyRow linear = RunStudy(Scheme::kLinearProbing, 0.5, keys, StudyOptions{});
  EXPECT_NEAR(linear.probes.average(), 1.5, 0.05);
  const StudyRow hopscotch = RunStudy(Scheme::kHopscotch, 0.5, keys, StudyOptions{});
  EXPECT_EQ(hopscotch.probes.max_probes, 1);
  EXPECT_DOUBLE_EQ(hopscotch.probes.one_read_fraction(), 1.0);
  const StudyRow cuckoo = RunStudy(Scheme::kCuckoo3Way, 0.5, keys, StudyOptions{});
  EXPECT_LE(cuckoo.probes.max_probes, 3);
  EXPECT_GT(cuckoo.probes.average(), 1.0);
  EXPECT_LT(cuckoo.probes.average(), 1.5);
}

TEST(ProbeStudyTest, FormatsMarkdown) {
  const std::vector<uint64_t> keys = StudyKeys(1'000, /*seed=*/1);
  const std::vector<StudyRow> rows = {RunStudy(Scheme::kCuckoo3Way, 0.5, keys, StudyOptions{}),
                                      RunStudy(Scheme::kLinearProbing, 0.5, keys, StudyOptions{})};
  const std::string table = FormatResultTable(rows);
  EXPECT_THAT(table, HasSubstr("| scheme | fill | avg probes | max probes | one-read lookups | failed inserts |"));
  EXPECT_THAT(table, HasSubstr("| 3-way cuckoo | 50% |"));
  EXPECT_THAT(table, HasSubstr("| linear probing | 50% |"));
  const std::string pivot = FormatAverageByFill(rows);
  EXPECT_THAT(pivot, HasSubstr("| fill | 3-way cuckoo | linear probing |"));
  EXPECT_THAT(pivot, HasSubstr("| 50% |"));
}

}  // namespace
}  // namespace fathom::kv::study
