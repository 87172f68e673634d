#include "bench/ycsb/zipfian.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "bench/ycsb/key_naming.h"
#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

constexpr int kItems = 1000;
constexpr int kDraws = 200000;

std::vector<int> Histogram(NumberGenerator& gen, Rng& rng, int64_t lo, int64_t hi) {
  std::vector<int> counts(static_cast<size_t>(hi - lo + 1), 0);
  for (int i = 0; i < kDraws; ++i) {
    const int64_t v = gen.Next(rng);
    EXPECT_GE(v, lo);
    EXPECT_LE(v, hi);
    if (v >= lo && v <= hi) ++counts[static_cast<size_t>(v - lo)];
  }
  return counts;
}

TEST(ZipfianTest, ZetaIsTheGeneralizedHarmonicNumber) {
  EXPECT_DOUBLE_EQ(Zeta(1, 0.99), 1.0);
  EXPECT_DOUBLE_EQ(Zeta(2, 0.99), 1.0 + std::pow(0.5, 0.99));
  // Continuing a partial sum gives the same as summing at once.
  EXPECT_NEAR(Zeta(500, 1000, 0.99, Zeta(500, 0.99)), Zeta(1000, 0.99), 1e-9);
}

// Gray et al.'s generator returns item 0 exactly when u * zetan < 1 and item 1 when it is below
// 1 + 0.5^theta, so their frequencies are 1/zetan and 0.5^theta/zetan. Beyond item 1 the method is an
// approximation: its top-10 share is ((10/n)^(1-theta) - 1 + eta) / eta (0.398 here), a little above the
// true zipfian share zeta(10)/zeta(n) (0.382).
TEST(ZipfianTest, FrequenciesMatchTheAnalyticValues) {
  Rng rng(2024);
  ZipfianGenerator zipfian(0, kItems - 1);
  const double zetan = Zeta(kItems, kZipfianConstant);
  EXPECT_DOUBLE_EQ(zipfian.zetan(), zetan);
  const std::vector<int> counts = Histogram(zipfian, rng, 0, kItems - 1);

  EXPECT_NEAR(counts[0] / double{kDraws}, 1.0 / zetan, 0.004);  // 0.1294
  EXPECT_NEAR(counts[1] / double{kDraws}, std::pow(0.5, kZipfianConstant) / zetan, 0.003);  // 0.0651
  EXPECT_EQ(std::max_element(counts.begin(), counts.end()) - counts.begin(), 0);

  int top10 = 0;
  for (int i = 0; i < 10; ++i) top10 += counts[i];
  const double share = top10 / double{kDraws};
  const double eta = (1 - std::pow(2.0 / kItems, 1 - kZipfianConstant)) / (1 - Zeta(2, kZipfianConstant) / zetan);
  const double gray_share = (std::pow(10.0 / kItems, 1 - kZipfianConstant) - 1 + eta) / eta;
  EXPECT_NEAR(share, gray_share, 0.005);
  EXPECT_NEAR(share, Zeta(10, kZipfianConstant) / zetan, 0.025);
}

TEST(ZipfianTest, GrowingItemCountExtendsZetaIncrementally) {
  Rng rng(1);
  ZipfianGenerator zipfian(0, 99);
  for (int i = 0; i < 1000; ++i) ASSERT_LE(zipfian.Next(rng, 200), 200);
  EXPECT_NEAR(zipfian.zetan(), Zeta(200, kZipfianConstant), 1e-9);
}

TEST(ZipfianTest, ScrambledUsesYcsbsPrecomputedZetan) {
  // YCSB's constant is zeta over its ZipfianGenerator(0, 10^10), i.e. 10^10 + 1 items. Spot-check the
  // magnitude cheaply: the sum's integral approximation is within 0.6 of it.
  const double n = 1e10 + 1;
  const double integral = 1 + (std::pow(n, 1 - kZipfianConstant) - 1) / (1 - kZipfianConstant);
  EXPECT_NEAR(ScrambledZipfianGenerator::kZetan, integral, 0.6);
}

TEST(ZipfianTest, ScrambledSpreadsTheHotItems) {
  Rng rng(77);
  ScrambledZipfianGenerator scrambled(0, kItems - 1);
  const std::vector<int> counts = Histogram(scrambled, rng, 0, kItems - 1);
  // The hottest rank (0) lands on fnv(0) mod n, with probability about 1/26.47.
  const int64_t hottest = std::max_element(counts.begin(), counts.end()) - counts.begin();
  EXPECT_EQ(hottest, YcsbFnvHash64(0) % kItems);
  EXPECT_NEAR(counts[hottest] / double{kDraws}, 1 / ScrambledZipfianGenerator::kZetan, 0.005);
  // The ten hottest items are scattered, not bunched at the low end as in plain zipfian.
  std::vector<int> order(kItems);
  for (int i = 0; i < kItems; ++i) order[i] = i;
  std::partial_sort(order.begin(), order.begin() + 10, order.end(),
                    [&](int a, int b) { return counts[a] > counts[b]; });
  const int lowest = *std::min_element(order.begin(), order.begin() + 10);
  const int highest = *std::max_element(order.begin(), order.begin() + 10);
  EXPECT_GT(highest - lowest, kItems / 2);
  int in_first_ten = 0;
  for (int i = 0; i < 10; ++i) in_first_ten += order[i] < 10 ? 1 : 0;
  EXPECT_LE(in_first_ten, 2);
  // Still skewed, though far flatter than plain zipfian over n items (the ranks come from 10^10 items and
  // the tail folds evenly onto all n): the hottest 10% of items get about 29% of draws; uniform gives 10%.
  std::vector<int> sorted = counts;
  std::sort(sorted.rbegin(), sorted.rend());
  int hot_decile = 0;
  for (int i = 0; i < kItems / 10; ++i) hot_decile += sorted[i];
  EXPECT_GT(hot_decile / double{kDraws}, 0.2);
}

TEST(ZipfianTest, LatestFavoursTheNewestKeys) {
  AcknowledgedCounterGenerator inserts(kItems);  // keys 0..999 loaded; Last() == 999
  SkewedLatestGenerator latest(&inserts);
  Rng rng(5);
  std::map<int64_t, int> counts;
  double sum = 0;
  for (int i = 0; i < kDraws; ++i) {
    const int64_t v = latest.Next(rng);
    ASSERT_GE(v, 1);  // YCSB quirk: key 0 is never chosen
    ASSERT_LE(v, kItems - 1);
    ++counts[v];
    sum += static_cast<double>(v);
  }
  EXPECT_NEAR(counts[kItems - 1] / double{kDraws}, 1.0 / Zeta(kItems - 1, kZipfianConstant), 0.004);
  EXPECT_GT(counts[kItems - 1], counts[kItems - 2]);
  EXPECT_GT(counts[kItems - 2], counts[kItems - 10]);
  EXPECT_GT(sum / kDraws, 0.6 * kItems);  // a uniform choice would average 500

  // New inserts become the hottest keys once acknowledged.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(inserts.Acknowledge(inserts.Next()).ok());
  ASSERT_EQ(inserts.Last(), kItems + 9);
  int newest = 0;
  for (int i = 0; i < 10000; ++i) newest += latest.Next(rng) == kItems + 9 ? 1 : 0;
  EXPECT_GT(newest, 1000);
}

}  // namespace
}  // namespace fathom::ycsb
