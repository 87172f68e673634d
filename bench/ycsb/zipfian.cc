#include "bench/ycsb/zipfian.h"

#include <cmath>

#include "bench/ycsb/key_naming.h"

namespace fathom::ycsb {

double Zeta(int64_t start, int64_t n, double theta, double initial_sum) {
  double sum = initial_sum;
  for (int64_t i = start; i < n; ++i) sum += 1.0 / std::pow(static_cast<double>(i + 1), theta);
  return sum;
}

ZipfianGenerator::ZipfianGenerator(int64_t min, int64_t max, double theta)
    : ZipfianGenerator(min, max, theta, Zeta(max - min + 1, theta)) {}

ZipfianGenerator::ZipfianGenerator(int64_t min, int64_t max, double theta, double zetan)
    : items_(max - min + 1),
      base_(min),
      theta_(theta),
      zeta2theta_(Zeta(2, theta)),
      alpha_(1.0 / (1.0 - theta)),
      zetan_(zetan),
      count_for_zeta_(items_) {
  eta_ = (1 - std::pow(2.0 / static_cast<double>(items_), 1 - theta_)) / (1 - zeta2theta_ / zetan_);
}

int64_t ZipfianGenerator::Next(Rng& rng, int64_t item_count) {
  if (item_count > count_for_zeta_) {
    zetan_ = Zeta(count_for_zeta_, item_count, theta_, zetan_);
    count_for_zeta_ = item_count;
    eta_ = (1 - std::pow(2.0 / static_cast<double>(items_), 1 - theta_)) / (1 - zeta2theta_ / zetan_);
  }
  const double u = NextUnitDouble(rng);
  const double uz = u * zetan_;
  if (uz < 1.0) return base_;
  if (uz < 1.0 + std::pow(0.5, theta_)) return base_ + 1;
  return base_ + static_cast<int64_t>(static_cast<double>(item_count) * std::pow(eta_ * u - eta_ + 1, alpha_));
}

ScrambledZipfianGenerator::ScrambledZipfianGenerator(int64_t min, int64_t max, double theta)
    : min_(min),
      item_count_(max - min + 1),
      zipfian_(theta == kZipfianConstant ? ZipfianGenerator(0, kItemCount, theta, kZetan)
                                         : ZipfianGenerator(0, kItemCount, theta)) {}

int64_t ScrambledZipfianGenerator::Next(Rng& rng) {
  const int64_t rank = zipfian_.Next(rng);
  // Java's % keeps the sign of the dividend; the hash is non-negative except for Long.MIN_VALUE,
  // which no rank below 10^10 hashes to in practice. Same arithmetic as YCSB either way.
  return min_ + YcsbFnvHash64(rank) % item_count_;
}

SkewedLatestGenerator::SkewedLatestGenerator(const AcknowledgedCounterGenerator* basis)
    : basis_(basis), zipfian_(0, basis->Last() - 1) {}

int64_t SkewedLatestGenerator::Next(Rng& rng) {
  const int64_t max = basis_->Last();
  return max - zipfian_.Next(rng, max);
}

}  // namespace fathom::ycsb
