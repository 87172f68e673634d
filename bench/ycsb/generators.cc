#include "bench/ycsb/generators.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"

namespace fathom::ycsb {

HotspotIntegerGenerator::HotspotIntegerGenerator(int64_t lower, int64_t upper, double hot_set_fraction,
                                                 double hot_operation_fraction) {
  if (hot_set_fraction < 0.0 || hot_set_fraction > 1.0) hot_set_fraction = 0.0;
  if (hot_operation_fraction < 0.0 || hot_operation_fraction > 1.0) hot_operation_fraction = 0.0;
  if (lower > upper) std::swap(lower, upper);
  lower_ = lower;
  const int64_t interval = upper - lower + 1;
  hot_interval_ = static_cast<int64_t>(static_cast<double>(interval) * hot_set_fraction);
  cold_interval_ = interval - hot_interval_;
  hot_operation_fraction_ = hot_operation_fraction;
}

int64_t HotspotIntegerGenerator::Next(Rng& rng) {
  // YCSB would divide by zero on an empty hot or cold set; we fall through to the other set instead.
  const bool hot = NextUnitDouble(rng) < hot_operation_fraction_;
  if ((hot && hot_interval_ > 0) || cold_interval_ == 0) {
    return lower_ + static_cast<int64_t>(NextBelow(rng, hot_interval_));
  }
  return lower_ + hot_interval_ + static_cast<int64_t>(NextBelow(rng, cold_interval_));
}

AcknowledgedCounterGenerator::AcknowledgedCounterGenerator(int64_t start)
    : counter_(start), limit_(start - 1), window_(kWindowSize, false) {}

absl::Status AcknowledgedCounterGenerator::Acknowledge(int64_t value) {
  MutexLock lock(&mu_);
  const int64_t slot = value & kWindowMask;
  if (window_[slot]) {
    return absl::ResourceExhaustedError(absl::StrCat("too many unacknowledged insertion keys (", value, ")"));
  }
  window_[slot] = true;
  // Advance the limit over every contiguous acknowledged value, clearing their slots for reuse.
  int64_t index = limit_.load(std::memory_order_relaxed) + 1;
  while (window_[index & kWindowMask]) {
    window_[index & kWindowMask] = false;
    ++index;
  }
  limit_.store(index - 1, std::memory_order_release);
  return absl::OkStatus();
}

}  // namespace fathom::ycsb
