#include "bench/ycsb/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

TEST(LatencyHistogramTest, BucketsTileTheRangeWithinOnePercent) {
  uint64_t expected_lowest = 0;
  for (int index = 0; index < LatencyHistogram::BucketIndex(UINT64_MAX) + 1; ++index) {
    const uint64_t lowest = LatencyHistogram::BucketLowest(index);
    const uint64_t highest = LatencyHistogram::BucketHighest(index);
    ASSERT_EQ(lowest, expected_lowest) << index;  // contiguous, no gaps or overlaps
    ASSERT_GE(highest, lowest);
    ASSERT_LE(static_cast<double>(highest - lowest), 0.01 * static_cast<double>(lowest)) << index;
    ASSERT_EQ(LatencyHistogram::BucketIndex(lowest), index);
    ASSERT_EQ(LatencyHistogram::BucketIndex(highest), index);
    expected_lowest = highest + 1;
  }
  EXPECT_EQ(expected_lowest, 0u);  // the last bucket ends at UINT64_MAX (and the sum wrapped to 0)
}

TEST(LatencyHistogramTest, PercentilesAreWithinOnePercentOfExact) {
  // Log-uniform latencies from 100 ns to 100 ms, the range a KV benchmark sees.
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> log_value(std::log(100.0), std::log(1e8));
  std::vector<uint64_t> samples;
  LatencyHistogram h;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = static_cast<uint64_t>(std::exp(log_value(rng)));
    samples.push_back(v);
    h.Record(v);
  }
  std::sort(samples.begin(), samples.end());
  for (double p : {1.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0}) {
    const size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(p / 100.0 * samples.size())));
    const double exact = static_cast<double>(samples[rank - 1]);
    const double reported = static_cast<double>(h.ValueAtPercentile(p));
    EXPECT_GE(reported, exact) << p;
    EXPECT_LE((reported - exact) / exact, 0.01) << p;
  }
  EXPECT_EQ(h.count(), samples.size());
  EXPECT_EQ(h.min(), samples.front());
  EXPECT_EQ(h.max(), samples.back());
  double sum = 0;
  for (uint64_t v : samples) sum += static_cast<double>(v);
  EXPECT_NEAR(h.Mean(), sum / samples.size(), 1e-6 * h.Mean());
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram h;
  for (uint64_t v = 0; v < 100; ++v) h.Record(v);
  EXPECT_EQ(h.ValueAtPercentile(50), 49u);
  EXPECT_EQ(h.ValueAtPercentile(99), 98u);
  EXPECT_EQ(h.ValueAtPercentile(100), 99u);
  EXPECT_EQ(h.min(), 0u);
}

TEST(LatencyHistogramTest, EmptyHistogramReportsZeros) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.Mean(), 0.0);
  EXPECT_EQ(h.ValueAtPercentile(99), 0u);
}

TEST(LatencyHistogramTest, MergeEqualsRecordingEverythingInOne) {
  LatencyHistogram a, b, all;
  for (uint64_t v = 1; v < 100000; v += 37) {
    (v % 2 ? a : b).Record(v);
    all.Record(v);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_EQ(a.Mean(), all.Mean());
  for (double p : {50.0, 95.0, 99.0, 99.9}) EXPECT_EQ(a.ValueAtPercentile(p), all.ValueAtPercentile(p));
}

TEST(LatencyHistogramTest, PercentileNeverExceedsTheMaximum) {
  LatencyHistogram h;
  h.Record(1'000'001);  // mid-bucket: the bucket's top is above it
  EXPECT_EQ(h.ValueAtPercentile(100), 1'000'001u);
  EXPECT_EQ(h.ValueAtPercentile(50), 1'000'001u);
}

}  // namespace
}  // namespace fathom::ycsb
