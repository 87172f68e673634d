#include "bench/ycsb/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace fathom::ycsb {
namespace {

// Buckets 0..127 are exact; then 128 per exponent e in [7, 63].
constexpr int kBucketCount = static_cast<int>(LatencyHistogram::kSubBucketCount) * (64 - 7 + 1);

}  // namespace

LatencyHistogram::LatencyHistogram() : buckets_(kBucketCount, 0) {}

int LatencyHistogram::BucketIndex(uint64_t value) {
  if (value < kSubBucketCount) return static_cast<int>(value);
  const int exponent = 63 - std::countl_zero(value);  // >= 7
  const int shift = exponent - kSubBucketBits;
  const uint64_t sub_bucket = (value >> shift) - kSubBucketCount;  // 0..127
  return static_cast<int>(kSubBucketCount) * (shift + 1) + static_cast<int>(sub_bucket);
}

uint64_t LatencyHistogram::BucketLowest(int index) {
  if (index < static_cast<int>(kSubBucketCount)) return static_cast<uint64_t>(index);
  const int shift = index / static_cast<int>(kSubBucketCount) - 1;
  const uint64_t sub_bucket = static_cast<uint64_t>(index) % kSubBucketCount;
  return (kSubBucketCount + sub_bucket) << shift;
}

uint64_t LatencyHistogram::BucketHighest(int index) {
  if (index < static_cast<int>(kSubBucketCount)) return static_cast<uint64_t>(index);
  const int shift = index / static_cast<int>(kSubBucketCount) - 1;
  return BucketLowest(index) + ((uint64_t{1} << shift) - 1);
}

void LatencyHistogram::Record(uint64_t value) {
  ++buckets_[BucketIndex(value)];
  ++count_;
  sum_ += value;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

uint64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  if (count_ == 0) return 0;
  percentile = std::clamp(percentile, 0.0, 100.0);
  // The rank of the sample we want, 1-based; at least the first sample.
  const uint64_t rank =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(percentile / 100.0 * static_cast<double>(count_))));
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::min(BucketHighest(static_cast<int>(i)), max_);
  }
  return max_;
}

}  // namespace fathom::ycsb
