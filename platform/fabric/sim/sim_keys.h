// The sim fabric's address payload and remote key: how a SimNetwork names a worker and a region in the blobs
// the control plane ships (EncodeAddress's payload, RegionDescriptor::remote_key). Little-endian.
//
//   worker address payload (20 bytes): u32 magic "SWA1" | u64 network id | u32 node | u32 worker
//   remote key             (28 bytes): u32 magic "SRK1" | u64 network id | u32 node | u32 region | u64 generation
//
// The network id is unique per SimNetwork in the process, so a blob from another network is rejected rather
// than silently naming a different node's memory. The generation is unique per registration, so a key stays
// dead after its region is deregistered.
#ifndef FATHOM_PLATFORM_FABRIC_SIM_SIM_KEYS_H_
#define FATHOM_PLATFORM_FABRIC_SIM_SIM_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fathom::fabric::sim::internal {

inline constexpr uint32_t kWorkerAddressMagic = 0x31415753;  // "SWA1"
inline constexpr uint32_t kRemoteKeyMagic = 0x314b5253;      // "SRK1"

struct WorkerAddress {
  uint64_t network = 0;
  uint32_t node = 0;
  uint32_t worker = 0;
};

// Registered memory, as a remote key names it.
struct RegionId {
  uint32_t node = 0;
  uint32_t region = 0;
  uint64_t generation = 0;
};

struct RemoteKey {
  uint64_t network = 0;
  RegionId region;
};

// The whole address blob (EncodeAddress envelope around the payload).
std::string EncodeWorkerAddress(const WorkerAddress& address);
// InvalidArgument for anything malformed, including a checksum mismatch or another fabric kind.
absl::StatusOr<WorkerAddress> DecodeWorkerAddress(std::string_view blob);

std::string EncodeRemoteKey(const RemoteKey& key);
// InvalidArgument for anything malformed.
absl::StatusOr<RemoteKey> DecodeRemoteKey(std::string_view bytes);

}  // namespace fathom::fabric::sim::internal

#endif  // FATHOM_PLATFORM_FABRIC_SIM_SIM_KEYS_H_
