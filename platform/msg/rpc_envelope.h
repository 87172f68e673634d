// The RPC envelope: the first 16 bytes of every RPC message's ring payload (docs/formats/ring.md).
// It says whether the message is a request, a reply or a one-way message, carries the request id that
// pairs a reply with its call, and a reply's status code. The ring record's type is the RPC message type
// (a reply carries its request's type).
#ifndef FATHOM_PLATFORM_MSG_RPC_ENVELOPE_H_
#define FATHOM_PLATFORM_MSG_RPC_ENVELOPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fathom::msg {

inline constexpr size_t kEnvelopeSize = 16;

enum class RpcKind : uint8_t { kRequest = 1, kReply = 2, kOneWay = 3 };

struct Envelope {
  uint64_t request_id = 0;  // non-zero for requests and replies, zero for one-way messages
  RpcKind kind = RpcKind::kOneWay;
  absl::StatusCode code = absl::StatusCode::kOk;  // replies only: the handler's status
};

// Writes the 16 envelope bytes at `out`.
void EncodeEnvelope(char* out, const Envelope& envelope);

struct DecodedEnvelope {
  Envelope envelope;
  std::string_view body;  // the payload after the envelope (a reply with an error: the status message)
};

// InvalidArgument if the payload is shorter than the envelope, the kind is unknown, reserved bits are set,
// the status code is not an absl::StatusCode (or set outside a reply), or the request id is zero where it
// must not be (request, reply) or non-zero where it must be zero (one-way).
absl::StatusOr<DecodedEnvelope> DecodeEnvelope(std::string_view payload);

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_RPC_ENVELOPE_H_
