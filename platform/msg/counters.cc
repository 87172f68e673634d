#include "platform/msg/counters.h"

#include "absl/strings/str_cat.h"

namespace fathom::msg {

const char* RejectReasonName(RejectReason reason) {
  switch (reason) {
    case RejectReason::kNone: return "none";
    case RejectReason::kBadLength: return "bad_length";
    case RejectReason::kBadHeader: return "bad_header";
    case RejectReason::kBadChecksum: return "bad_checksum";
    case RejectReason::kBadSequence: return "bad_sequence";
    case RejectReason::kBadCredit: return "bad_credit";
    case RejectReason::kBadEnvelope: return "bad_envelope";
    case RejectReason::kUnknownType: return "unknown_type";
    case RejectReason::kBadPayload: return "bad_payload";
    case RejectReason::kUnexpectedReply: return "unexpected_reply";
  }
  return "?";
}

uint64_t MsgCounters::rejected_total() const {
  uint64_t total = 0;
  for (uint64_t n : rejected) total += n;
  return total;
}

MsgCounters& MsgCounters::operator+=(const MsgCounters& other) {
  messages += other.messages;
  bytes += other.bytes;
  for (size_t i = 0; i < kRejectReasonCount; ++i) rejected[i] += other.rejected[i];
  return *this;
}

std::string MsgCounters::DebugString() const {
  std::string out = absl::StrCat("messages=", messages, " bytes=", bytes);
  for (size_t i = 1; i < kRejectReasonCount; ++i) {
    if (rejected[i] != 0) absl::StrAppend(&out, " ", RejectReasonName(static_cast<RejectReason>(i)), "=", rejected[i]);
  }
  return out;
}

}  // namespace fathom::msg
