// What the msg layer counts: messages and bytes accepted, and messages rejected, by reason.
#ifndef FATHOM_PLATFORM_MSG_COUNTERS_H_
#define FATHOM_PLATFORM_MSG_COUNTERS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace fathom::msg {

enum class RejectReason : uint8_t {
  kNone = 0,
  // Framing errors. The byte stream of a ring cannot be resynchronised after one, so the ring (the
  // connection) is marked bad at once.
  kBadLength,    // a length impossible for the ring (beyond max payload, past the ring's end, lying padding)
  kBadHeader,    // reserved bits set
  kBadChecksum,  // the expected record never verified (torn for longer than ReceiverOptions::corrupt_after)
  kBadSequence,  // a complete, valid record with the wrong sequence number or position (stale or skipped)
  kBadCredit,    // a valid credit record naming a head the sender never wrote, or moving backwards
  // Message errors. The record was framed correctly; it is consumed and dropped. A ring that delivers
  // ReceiverOptions::max_consecutive_rejects of them in a row is marked bad.
  kBadEnvelope,      // RPC envelope malformed (too short, unknown kind, reserved bits)
  kUnknownType,      // a one-way message no handler takes (a request is answered "unimplemented" instead)
  kBadPayload,       // the handler found the payload malformed (returned InvalidArgument or OutOfRange)
  kUnexpectedReply,  // a reply from a peer other than the one called
};
inline constexpr size_t kRejectReasonCount = 10;
const char* RejectReasonName(RejectReason reason);
// Whether a reject of this kind marks the ring bad at once.
constexpr bool IsFramingError(RejectReason reason) {
  return reason >= RejectReason::kBadLength && reason <= RejectReason::kBadCredit;
}

struct MsgCounters {
  uint64_t messages = 0;  // records accepted (delivered to the layer above, or handled)
  uint64_t bytes = 0;     // payload bytes of those
  std::array<uint64_t, kRejectReasonCount> rejected{};

  uint64_t rejected_for(RejectReason reason) const { return rejected[static_cast<size_t>(reason)]; }
  uint64_t rejected_total() const;
  MsgCounters& operator+=(const MsgCounters& other);
  std::string DebugString() const;
};

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_COUNTERS_H_
