// Ring geometry: where records go in a ring of a given capacity, when the stream wraps, and how much a
// receiver consumes before it writes its head back. Pure; shared by RingSender and RingReceiver so both
// sides place every record at the same position. Rules in docs/formats/ring.md ("Ring rules").
//
// Positions are absolute byte counts since the ring was set up (they never wrap); a position's byte in the
// ring is position % capacity. A record never straddles the end of the ring: a record that does not fit in
// the room before the end is placed at the start of the next lap, and the room it skips carries a padding
// record if it has space for a header (otherwise the receiver skips it implicitly, seeing less room than a
// header needs).
#ifndef FATHOM_PLATFORM_MSG_RING_LAYOUT_H_
#define FATHOM_PLATFORM_MSG_RING_LAYOUT_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "platform/msg/framing.h"

namespace fathom::msg {

inline constexpr uint32_t kMinRingCapacity = 256;
inline constexpr uint32_t kMaxRingCapacity = 1u << 30;

class RingGeometry {
 public:
  // `capacity`: a power of two in [kMinRingCapacity, kMaxRingCapacity]. `max_payload`: the largest message
  // payload, at least 1 and with RecordSpan(max_payload) <= capacity / 2. InvalidArgument otherwise.
  static absl::StatusOr<RingGeometry> Make(uint32_t capacity, uint32_t max_payload);
  // A quarter ring, so that the receiver can write its head back every half ring (see CreditThreshold).
  static uint32_t DefaultMaxPayload(uint32_t capacity) {
    return capacity / 4 - static_cast<uint32_t>(kRecordHeaderSize);
  }

  uint32_t capacity() const { return capacity_; }
  uint32_t max_payload() const { return max_payload_; }
  size_t max_span() const { return RecordSpan(max_payload_); }

  uint64_t OffsetOf(uint64_t position) const { return position & (uint64_t{capacity_} - 1); }
  uint64_t RoomBeforeEnd(uint64_t position) const { return capacity_ - OffsetOf(position); }
  // The bytes a record of `span` bytes skips when the stream is at `position`: 0 if it fits before the end,
  // otherwise all the room before the end (the record then starts the next lap).
  uint64_t SkipBefore(uint64_t position, size_t span) const {
    const uint64_t room = RoomBeforeEnd(position);
    return room >= span ? 0 : room;
  }
  // Whether a skip of `skip` bytes carries a padding record.
  static bool SkipHasMarker(uint64_t skip) { return skip >= kRecordHeaderSize; }
  // The receiver writes its head back once it has consumed this many bytes beyond the head it last wrote
  // back: half the ring, less if messages may be so large that a blocked sender could otherwise wait
  // forever. Liveness: a sender blocked on a record needing `need` <= 2 * max_span - 8 bytes (with its
  // skip) has more than capacity - need unacknowledged bytes, all of which a receiver that drained the ring
  // has consumed; so the threshold must not exceed capacity - (2 * max_span - 8) + 8.
  uint64_t CreditThreshold() const;

 private:
  RingGeometry(uint32_t capacity, uint32_t max_payload) : capacity_(capacity), max_payload_(max_payload) {}
  uint32_t capacity_;
  uint32_t max_payload_;
};

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_RING_LAYOUT_H_
