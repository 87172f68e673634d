// Bounds the control service enforces on what peers send, and the protocol version it speaks.
//
// Peers are never trusted: every NodeInfo, from a Join request or a Join reply, is checked against these
// bounds before any of it reaches the node (node_info_validation.h). The defaults fit a node with a few
// hundred worker threads and terabytes of memory in 2 GiB regions; tests shrink them.
//
//   ControlLimits limits;                 // defaults
//   limits.max_workers = 4;               // a test that wants to hit the bound quickly
#ifndef FATHOM_PLATFORM_NODE_CONTROL_CONTROL_LIMITS_H_
#define FATHOM_PLATFORM_NODE_CONTROL_CONTROL_LIMITS_H_

#include <cstddef>
#include <cstdint>

#include "platform/fabric/wire.h"

namespace fathom::control {

// Bumped whenever control.proto or a blob it carries changes meaning; nodes of different versions
// refuse to join each other.
inline constexpr uint32_t kControlProtocolVersion = 1;

// A whole fabric address envelope: 12-byte header, payload, 8-byte checksum (docs/formats/fabric.md).
inline constexpr size_t kMaxFabricAddressBytes = 12 + fabric::kMaxAddressPayloadBytes + 8;

struct ControlLimits {
  size_t max_cluster_name_bytes = 128;
  // Worker threads per node (entries of NodeInfo.worker_addresses; at least one is required).
  size_t max_workers = 256;
  size_t max_worker_address_bytes = kMaxFabricAddressBytes;
  size_t max_regions = 16384;
  // A global address keeps 32 bits of offset, so no region is larger than 4 GiB.
  uint64_t max_region_bytes = uint64_t{1} << 32;
  size_t max_rings = 4096;
  size_t max_ring_location_bytes = 1024;
  size_t max_shutdown_reason_bytes = 1024;
  // Admin calls: object payloads, worker thread indexes, ping counts.
  size_t max_object_payload_bytes = 1 << 20;
  uint32_t max_ping_count = 1'000'000;
  // gRPC's limit on one message, both ways. Larger messages fail with RESOURCE_EXHAUSTED before any of
  // our code sees them, which also caps the sum of everything above.
  size_t max_message_bytes = 16 << 20;
};

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_CONTROL_LIMITS_H_
