// YCSB's zipfian family, from "Quickly Generating Billion-Record Synthetic Databases" (Gray et al.,
// SIGMOD 1994), ported from site.ycsb.generator including its quirks (noted where they matter):
//   ZipfianGenerator           popular items are the low numbers (item 0 most popular)
//   ScrambledZipfianGenerator  the same popularity curve, with the popular items scattered by FNV hashing
//   SkewedLatestGenerator      popular items are the most recently inserted ones (workload D)
//
//   Rng rng(7);
//   ScrambledZipfianGenerator keys(0, 999);
//   int64_t keynum = keys.Next(rng);
#ifndef FATHOM_BENCH_YCSB_ZIPFIAN_H_
#define FATHOM_BENCH_YCSB_ZIPFIAN_H_

#include <cstdint>

#include "bench/ycsb/generators.h"

namespace fathom::ycsb {

inline constexpr double kZipfianConstant = 0.99;

// zeta(n, theta) = sum_{i=1..n} 1 / i^theta, continued from `initial_sum` which covers the first `start`
// items (YCSB's zetastatic).
double Zeta(int64_t start, int64_t n, double theta, double initial_sum);
inline double Zeta(int64_t n, double theta) { return Zeta(0, n, theta, 0.0); }

// Items in [min, max]; P(min + i) is proportional to 1 / (i+1)^theta.
class ZipfianGenerator final : public NumberGenerator {
 public:
  ZipfianGenerator(int64_t min, int64_t max, double theta = kZipfianConstant);
  // With zetan given, skipping the O(items) sum (YCSB uses this for its precomputed 10^10-item constant).
  ZipfianGenerator(int64_t min, int64_t max, double theta, double zetan);

  int64_t Next(Rng& rng) override { return Next(rng, items_); }
  // Draws over the first `item_count` items. When item_count grows, zetan is extended incrementally.
  // (YCSB quirk kept: eta is then recomputed with the original item count, not the new one. It also
  // ignores a shrinking item_count unless told otherwise; so do we.)
  int64_t Next(Rng& rng, int64_t item_count);

  double zetan() const { return zetan_; }

 private:
  int64_t items_;
  int64_t base_;
  double theta_;
  double zeta2theta_;
  double alpha_;
  double zetan_;
  double eta_;
  int64_t count_for_zeta_;
};

// ScrambledZipfianGenerator: draws a zipfian rank over 10^10 items, hashes it with YCSB's FNV-1a-64 and
// takes it modulo the item count, so the hot items are spread over [min, max] instead of bunched at min.
class ScrambledZipfianGenerator final : public NumberGenerator {
 public:
  static constexpr int64_t kItemCount = 10'000'000'000LL;
  // zeta(10^10 + 1, 0.99) as YCSB precomputed it (its ZipfianGenerator over [0, kItemCount]).
  static constexpr double kZetan = 26.46902820178302;

  ScrambledZipfianGenerator(int64_t min, int64_t max, double theta = kZipfianConstant);
  int64_t Next(Rng& rng) override;

 private:
  int64_t min_;
  int64_t item_count_;
  ZipfianGenerator zipfian_;
};

// SkewedLatestGenerator: next = Last() - zipfian(Last()), so the newest acknowledged keys are hottest.
// YCSB quirk kept: the zipfian draws over Last() items, so with keys 0..N-1 the values lie in [1, N-1]
// and key 0 is never chosen.
class SkewedLatestGenerator final : public NumberGenerator {
 public:
  explicit SkewedLatestGenerator(const AcknowledgedCounterGenerator* basis);
  int64_t Next(Rng& rng) override;

 private:
  const AcknowledgedCounterGenerator* basis_;
  ZipfianGenerator zipfian_;
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_ZIPFIAN_H_
