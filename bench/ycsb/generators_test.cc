#include "bench/ycsb/generators.h"

#include <vector>

#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

TEST(GeneratorsTest, UnitDoubleIsInHalfOpenUnitInterval) {
  Rng rng(1);
  double lowest = 1, highest = 0;
  for (int i = 0; i < 100000; ++i) {
    const double d = NextUnitDouble(rng);
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
    lowest = std::min(lowest, d);
    highest = std::max(highest, d);
  }
  EXPECT_LT(lowest, 0.001);
  EXPECT_GT(highest, 0.999);
}

// Pearson's chi-square over 100 equally likely values. With 99 degrees of freedom the statistic exceeds
// 148.2 with probability 0.001; the seed is fixed, so this is deterministic, not a flaky check.
TEST(GeneratorsTest, UniformLongIsUniformByChiSquare) {
  constexpr int kBins = 100;
  constexpr int kDraws = 200000;
  Rng rng(12345);
  UniformLongGenerator uniform(1000, 1000 + kBins - 1);
  std::vector<int> counts(kBins, 0);
  for (int i = 0; i < kDraws; ++i) {
    const int64_t v = uniform.Next(rng);
    ASSERT_GE(v, 1000);
    ASSERT_LT(v, 1000 + kBins);
    ++counts[v - 1000];
  }
  const double expected = static_cast<double>(kDraws) / kBins;
  double chi_square = 0;
  for (int c : counts) chi_square += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi_square, 148.2);
}

TEST(GeneratorsTest, HotspotSendsTheHotFractionToTheHotSet) {
  Rng rng(3);
  HotspotIntegerGenerator hotspot(0, 999, /*hot_set_fraction=*/0.2, /*hot_operation_fraction=*/0.8);
  constexpr int kDraws = 100000;
  int hot = 0;
  for (int i = 0; i < kDraws; ++i) {
    const int64_t v = hotspot.Next(rng);
    ASSERT_GE(v, 0);
    ASSERT_LE(v, 999);
    if (v < 200) ++hot;
  }
  EXPECT_NEAR(static_cast<double>(hot) / kDraws, 0.8, 0.01);
}

TEST(GeneratorsTest, HotspotWithAnEmptySetStillDrawsInRange) {
  Rng rng(3);
  HotspotIntegerGenerator all_cold(0, 9, 0.0, 0.9);
  HotspotIntegerGenerator all_hot(0, 9, 1.0, 0.1);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_LE(all_cold.Next(rng), 9);
    ASSERT_LE(all_hot.Next(rng), 9);
  }
}

TEST(GeneratorsTest, CounterCountsFromStart) {
  CounterGenerator counter(5);
  EXPECT_EQ(counter.Last(), 4);
  EXPECT_EQ(counter.Next(), 5);
  EXPECT_EQ(counter.Next(), 6);
  EXPECT_EQ(counter.Last(), 6);
}

TEST(GeneratorsTest, AcknowledgedCounterAdvancesOnlyOverContiguousAcks) {
  AcknowledgedCounterGenerator counter(10);
  EXPECT_EQ(counter.Last(), 9);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(counter.Next(), 10 + i);
  ASSERT_TRUE(counter.Acknowledge(11).ok());
  EXPECT_EQ(counter.Last(), 9);  // 10 still in flight
  ASSERT_TRUE(counter.Acknowledge(10).ok());
  EXPECT_EQ(counter.Last(), 11);
  ASSERT_TRUE(counter.Acknowledge(13).ok());
  EXPECT_EQ(counter.Last(), 11);
  ASSERT_TRUE(counter.Acknowledge(12).ok());
  EXPECT_EQ(counter.Last(), 13);
  // A value a full window ahead of an unacknowledged one lands on an occupied slot.
  ASSERT_TRUE(counter.Acknowledge(15).ok());
  EXPECT_FALSE(counter.Acknowledge(15 + (int64_t{1} << 20)).ok());
}

TEST(GeneratorsTest, DiscreteGeneratorFollowsWeightsInOrder) {
  DiscreteGenerator<char> chooser;
  chooser.Add(0.5, 'r');
  chooser.Add(0.3, 'u');
  chooser.Add(0.2, 'i');
  Rng rng(9);
  constexpr int kDraws = 100000;
  int r = 0, u = 0, i = 0;
  for (int n = 0; n < kDraws; ++n) {
    switch (chooser.Next(rng)) {
      case 'r': ++r; break;
      case 'u': ++u; break;
      case 'i': ++i; break;
    }
  }
  EXPECT_NEAR(r / double{kDraws}, 0.5, 0.01);
  EXPECT_NEAR(u / double{kDraws}, 0.3, 0.01);
  EXPECT_NEAR(i / double{kDraws}, 0.2, 0.01);
}

}  // namespace
}  // namespace fathom::ycsb
