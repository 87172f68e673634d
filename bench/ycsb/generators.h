// YCSB's number generators (site.ycsb.generator), ported formula for formula, with the randomness
// injected: every draw takes the caller's Rng, so a seed replays a run and tests are deterministic.
// Generators that hold no shared state are cheap to copy; the driver gives each client thread its own.
// CounterGenerator and AcknowledgedCounterGenerator are shared by all threads and are thread-safe.
//
//   Rng rng(42);
//   UniformLongGenerator uniform(0, 999);
//   int64_t key = uniform.Next(rng);
//
// The zipfian family lives in zipfian.h.
#ifndef FATHOM_BENCH_YCSB_GENERATORS_H_
#define FATHOM_BENCH_YCSB_GENERATORS_H_

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace fathom::ycsb {

using Rng = std::mt19937_64;

// Java's Random.nextDouble: 53 random bits scaled into [0, 1). Written out rather than
// std::uniform_real_distribution so the stream of values is the same with every standard library.
inline double NextUnitDouble(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// A uniform integer in [0, bound), without modulo bias. REQUIRES: bound > 0.
inline uint64_t NextBelow(Rng& rng, uint64_t bound) { return std::uniform_int_distribution<uint64_t>(0, bound - 1)(rng); }

class NumberGenerator {
 public:
  virtual ~NumberGenerator() = default;
  virtual int64_t Next(Rng& rng) = 0;
};

class ConstantGenerator final : public NumberGenerator {
 public:
  explicit ConstantGenerator(int64_t value) : value_(value) {}
  int64_t Next(Rng&) override { return value_; }

 private:
  int64_t value_;
};

// UniformLongGenerator: every integer in [lower, upper] equally likely.
class UniformLongGenerator final : public NumberGenerator {
 public:
  UniformLongGenerator(int64_t lower, int64_t upper) : lower_(lower), interval_(upper - lower + 1) {}
  int64_t Next(Rng& rng) override { return lower_ + static_cast<int64_t>(NextBelow(rng, interval_)); }

 private:
  int64_t lower_;
  uint64_t interval_;
};

// HotspotIntegerGenerator: a fraction `hot_operation_fraction` of draws falls uniformly in the first
// `hot_set_fraction` of [lower, upper], the rest uniformly in the remainder. Fractions outside [0, 1]
// are clamped, as YCSB does (it warns and uses 0).
class HotspotIntegerGenerator final : public NumberGenerator {
 public:
  HotspotIntegerGenerator(int64_t lower, int64_t upper, double hot_set_fraction, double hot_operation_fraction);
  int64_t Next(Rng& rng) override;

 private:
  int64_t lower_;
  int64_t hot_interval_;
  int64_t cold_interval_;
  double hot_operation_fraction_;
};

// CounterGenerator: hands out start, start+1, ... to all threads.
class CounterGenerator {
 public:
  explicit CounterGenerator(int64_t start) : next_(start) {}
  int64_t Next() { return next_.fetch_add(1, std::memory_order_relaxed); }
  int64_t Last() const { return next_.load(std::memory_order_relaxed) - 1; }

 private:
  std::atomic<int64_t> next_;
};

// AcknowledgedCounterGenerator: a counter for transaction-phase inserts whose Last() is the highest
// value below which every value has been acknowledged (its insert finished), so readers choosing among
// "existing" keys never pick one whose insert is still in flight. A window of 2^20 outstanding values,
// as in YCSB; overflowing it is an error (YCSB throws).
class AcknowledgedCounterGenerator {
 public:
  explicit AcknowledgedCounterGenerator(int64_t start);
  int64_t Next() { return counter_.Next(); }
  int64_t Last() const { return limit_.load(std::memory_order_acquire); }
  absl::Status Acknowledge(int64_t value);

 private:
  static constexpr int64_t kWindowSize = int64_t{1} << 20;
  static constexpr int64_t kWindowMask = kWindowSize - 1;
  CounterGenerator counter_;
  std::atomic<int64_t> limit_;
  absl::Mutex mu_;
  std::vector<bool> window_ ABSL_GUARDED_BY(mu_);
};

// DiscreteGenerator: picks one of several values with probability proportional to its weight, walking
// the list in insertion order exactly as YCSB does (so the same unit draw picks the same value).
template <typename T>
class DiscreteGenerator {
 public:
  void Add(double weight, T value) { choices_.emplace_back(weight, std::move(value)); }
  bool empty() const { return choices_.empty(); }
  // REQUIRES: !empty() and a positive total weight.
  const T& Next(Rng& rng) const {
    double sum = 0;
    for (const auto& [weight, value] : choices_) sum += weight;
    double draw = NextUnitDouble(rng);
    for (const auto& [weight, value] : choices_) {
      if (draw < weight / sum) return value;
      draw -= weight / sum;
    }
    return choices_.back().second;  // rounding left a sliver above the last boundary
  }

 private:
  std::vector<std::pair<double, T>> choices_;
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_GENERATORS_H_
