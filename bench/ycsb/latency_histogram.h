// LatencyHistogram: an HDR-style log-linear histogram of non-negative integers (latencies in ns).
// Values below 128 get a bucket each; above, every power-of-two range [2^e, 2^(e+1)) is cut into 128
// equal buckets, so a bucket is at most 1/128 of its lower bound wide. A percentile is reported as the
// highest value its bucket holds (as HdrHistogram does), clamped to the recorded maximum: it is never below
// the true sample and at most 0.79% above it. Count, min, max and sum are exact.
// Not thread-safe: each client thread records into its own and the driver merges them.
//
//   LatencyHistogram h;
//   h.Record(52'300);                      // 52.3 us, in ns
//   uint64_t p99 = h.ValueAtPercentile(99.0);
#ifndef FATHOM_BENCH_YCSB_LATENCY_HISTOGRAM_H_
#define FATHOM_BENCH_YCSB_LATENCY_HISTOGRAM_H_

#include <cstdint>
#include <vector>

namespace fathom::ycsb {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 7;  // 128 buckets per power of two: relative width <= 1/128
  static constexpr uint64_t kSubBucketCount = uint64_t{1} << kSubBucketBits;

  LatencyHistogram();

  void Record(uint64_t value);
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double Mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_); }
  // The smallest recorded bucket's upper value such that at least `percentile`% of samples are <= it.
  // 0 for an empty histogram.
  uint64_t ValueAtPercentile(double percentile) const;

  // Bucket arithmetic, public for tests.
  static int BucketIndex(uint64_t value);
  static uint64_t BucketLowest(int index);
  static uint64_t BucketHighest(int index);

 private:
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  // Sum of samples; 2^64 ns is 584 years of latency, so no overflow in practice.
  uint64_t sum_ = 0;
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_LATENCY_HISTOGRAM_H_
