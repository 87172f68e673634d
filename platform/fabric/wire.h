// Byte formats the fabric ships through the control plane: region descriptors and worker address
// blobs. Both are little-endian and end with an XXH3-64 checksum; see docs/formats/fabric.md.
#ifndef FATHOM_PLATFORM_FABRIC_WIRE_H_
#define FATHOM_PLATFORM_FABRIC_WIRE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

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

// Little-endian helpers shared by the encoders.
void AppendU32(std::string& out, uint32_t v);
void AppendU64(std::string& out, uint64_t v);
uint32_t LoadU32(const char* p);
uint64_t LoadU64(const char* p);

}  // namespace fathom::fabric

#endif  // FATHOM_PLATFORM_FABRIC_WIRE_H_
