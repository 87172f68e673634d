// Byte formats the fabric ships through the control plane: region descriptors and worker address
// blobs. Both are little-endian and end with an XXH3-64 checksum; see docs/formats/fabric.md.
#ifndef FATHOM_PLATFORM_FABRIC_WIRE_H_
#define FATHOM_PLATFORM_FABRIC_WIRE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "platform/base/byte_order.h"

namespace fathom::fabric {

enum class FabricKind : uint8_t { kUcx = 1, kSim = 2 };

inline constexpr uint32_t kRegionDescriptorMagic = 0x31445246;  // "FRD1"
inline constexpr uint32_t kAddressMagic = 0x31415746;           // "FWA1"
inline constexpr size_t kMaxRemoteKeyBytes = 4096;
inline constexpr size_t kMaxAddressPayloadBytes = 64 * 1024;

// Wraps an implementation's raw worker address in the checked envelope.
std::string EncodeAddress(FabricKind kind, std::string_view payload);
// Returns the raw payload; InvalidArgument if the blob is malformed or from another kind of fabric,
// DataLoss if its checksum does not match.
absl::StatusOr<std::string> DecodeAddress(FabricKind kind, std::string_view blob);

// Decodes a peer's address as Worker::Connect reports it: every malformed blob, a checksum mismatch
// included, is InvalidArgument (the Fabric contract names one code for a bad address).
absl::StatusOr<std::string> DecodePeerAddress(FabricKind kind, std::string_view blob);

// The trailing XXH3-64 checksum every control-plane blob ends with.
void AppendChecksum(std::string& out);
// Checks the trailing checksum and returns the bytes before it; InvalidArgument if too short for one,
// DataLoss on a mismatch. `what` names the blob in the message.
absl::StatusOr<std::string_view> StripChecksum(std::string_view bytes, const char* what);

// The encoders' little-endian helpers are platform/base/byte_order.h's.
using ::fathom::AppendU32;
using ::fathom::AppendU64;
using ::fathom::LoadU32;
using ::fathom::LoadU64;

}  // namespace fathom::fabric

#endif  // FATHOM_PLATFORM_FABRIC_WIRE_H_
