#include "platform/metrics/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace fathom::metrics {

void LatencyHistogram::Record(absl::Duration d) {
  const int64_t micros = std::max<int64_t>(absl::ToInt64Microseconds(absl::Ceil(d, absl::Microseconds(1))), 0);
  // The smallest i with micros ≤ 2^i: bit_width(micros - 1) (0 and 1 µs go to bucket 0).
  const int index = micros <= 1 ? 0 : std::bit_width(static_cast<uint64_t>(micros - 1));
  ++buckets_[std::min(index, kBuckets - 1)];
  ++count_;
  sum_seconds_ += absl::ToDoubleSeconds(d);
}

LatencyHistogram& LatencyHistogram::operator+=(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_seconds_ += other.sum_seconds_;
  return *this;
}

double LatencyHistogram::UpperBoundSeconds(int i) {
  if (i >= kBuckets - 1) return std::numeric_limits<double>::infinity();
  return std::ldexp(1.0, i) * 1e-6;
}

}  // namespace fathom::metrics
