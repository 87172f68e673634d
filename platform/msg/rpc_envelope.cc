#include "platform/msg/rpc_envelope.h"

#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/base/byte_order.h"

namespace fathom::msg {

namespace {
constexpr uint8_t kMaxStatusCode = static_cast<uint8_t>(absl::StatusCode::kUnauthenticated);  // 16
}  // namespace

void EncodeEnvelope(char* out, const Envelope& envelope) {
  StoreLe<uint64_t>(out, envelope.request_id);
  out[8] = static_cast<char>(envelope.kind);
  out[9] = static_cast<char>(static_cast<uint8_t>(envelope.code));
  std::memset(out + 10, 0, 6);
}

absl::StatusOr<DecodedEnvelope> DecodeEnvelope(std::string_view payload) {
  if (payload.size() < kEnvelopeSize) {
    return absl::InvalidArgumentError(absl::StrCat("rpc envelope: ", payload.size(), " bytes, need ", kEnvelopeSize));
  }
  DecodedEnvelope d;
  d.envelope.request_id = LoadLe<uint64_t>(payload.data());
  const uint8_t kind = static_cast<uint8_t>(payload[8]);
  const uint8_t code = static_cast<uint8_t>(payload[9]);
  for (size_t i = 10; i < kEnvelopeSize; ++i) {
    if (payload[i] != 0) return absl::InvalidArgumentError("rpc envelope: reserved bits set");
  }
  if (kind < 1 || kind > 3) return absl::InvalidArgumentError(absl::StrCat("rpc envelope: unknown kind ", kind));
  d.envelope.kind = static_cast<RpcKind>(kind);
  if (code > kMaxStatusCode || (code != 0 && d.envelope.kind != RpcKind::kReply)) {
    return absl::InvalidArgumentError(absl::StrCat("rpc envelope: bad status code ", code));
  }
  d.envelope.code = static_cast<absl::StatusCode>(code);
  const bool wants_id = d.envelope.kind != RpcKind::kOneWay;
  if (wants_id != (d.envelope.request_id != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rpc envelope: request id ", d.envelope.request_id, " for kind ", kind));
  }
  d.body = payload.substr(kEnvelopeSize);
  return d;
}

}  // namespace fathom::msg
