// LatencyHistogram: durations counted in power-of-two microsecond buckets, for the metrics page's
// latency histograms. Not thread-safe: each node thread keeps its own and the page sums them (+=).
#ifndef FATHOM_PLATFORM_METRICS_HISTOGRAM_H_
#define FATHOM_PLATFORM_METRICS_HISTOGRAM_H_

#include <array>
#include <cstdint>

#include "absl/time/time.h"

namespace fathom::metrics {

class LatencyHistogram {
 public:
  // Bucket i counts durations ≤ 2^i µs (i < kBuckets - 1); the last counts the rest (≤ +Inf).
  static constexpr int kBuckets = 22;  // 1 µs .. 2^20 µs (~1 s), then +Inf

  void Record(absl::Duration d);
  LatencyHistogram& operator+=(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  double sum_seconds() const { return sum_seconds_; }
  // Durations in bucket i alone (not cumulative).
  uint64_t bucket(int i) const { return buckets_[i]; }
  // The bucket's upper bound in seconds; +Inf for the last.
  static double UpperBoundSeconds(int i);

 private:
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  double sum_seconds_ = 0;
};

}  // namespace fathom::metrics

#endif  // FATHOM_PLATFORM_METRICS_HISTOGRAM_H_
