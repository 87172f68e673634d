#include "platform/msg/ring_layout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fathom::msg {

absl::StatusOr<RingGeometry> RingGeometry::Make(uint32_t capacity, uint32_t max_payload) {
  if (capacity < kMinRingCapacity || capacity > kMaxRingCapacity || (capacity & (capacity - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("ring capacity ", capacity, " is not a power of two in [",
                                                   kMinRingCapacity, ", ", kMaxRingCapacity, "]"));
  }
  if (max_payload == 0 || RecordSpan(max_payload) > capacity / 2) {
    return absl::InvalidArgumentError(absl::StrCat("ring max payload ", max_payload, " is not in [1, ",
                                                   capacity / 2 - kRecordHeaderSize, "] for capacity ",
                                                   capacity));
  }
  return RingGeometry(capacity, max_payload);
}

uint64_t RingGeometry::CreditThreshold() const {
  const uint64_t max_need = 2 * max_span() - kRecordAlignment;
  return std::min<uint64_t>(capacity_ / 2, capacity_ - max_need + kRecordAlignment);
}

}  // namespace fathom::msg
