// Checks of everything a peer sends over the control service, before any of it reaches the node.
//
// The server checks each request with these before it calls its ControlHandler, and the client checks
// the callee's Join reply the same way, so both ends of a handshake hold the same rules. Every failure
// is InvalidArgument whose message names the offending field, e.g.
// "caller.regions[2].region_descriptor: region descriptor: checksum mismatch".
//
//   NodeInfoExpectations expect{.cluster_name = "prod", .fabric_kind = fabric::FabricKind::kUcx};
//   RETURN_IF_ERROR(ValidateNodeInfo(request.caller(), expect, "caller"));
#ifndef FATHOM_PLATFORM_NODE_CONTROL_NODE_INFO_VALIDATION_H_
#define FATHOM_PLATFORM_NODE_CONTROL_NODE_INFO_VALIDATION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "platform/fabric/wire.h"
#include "platform/node/control/control.pb.h"
#include "platform/node/control/control_limits.h"

namespace fathom::control {

// What this node requires of a peer's NodeInfo besides the limits.
struct NodeInfoExpectations {
  std::string cluster_name;
  uint32_t protocol_version = kControlProtocolVersion;
  fabric::FabricKind fabric_kind = fabric::FabricKind::kUcx;
  ControlLimits limits;
};

// The proto enum value for a fabric kind (the numbers are the same by design).
FabricKind ToProtoFabricKind(fabric::FabricKind kind);

// OK, or InvalidArgument naming the first field of `info` (prefixed with `field`) that breaks a rule:
// node id 0; cluster name empty, too long or not ours; protocol version or fabric kind not ours;
// incarnation 0; no workers, too many, or an address blob that is empty, too long or does not decode for
// our fabric kind; too many regions, a duplicate region id, owner 0, size 0 or too large, a descriptor
// that does not parse, has no remote key, or whose length is not the size; too many rings, sender node 0,
// sender thread beyond max_workers, a duplicate (sender node, thread), an empty or too long location.
absl::Status ValidateNodeInfo(const NodeInfo& info, const NodeInfoExpectations& expect, std::string_view field);

// OK, or InvalidArgument if the reason is longer than limits.max_shutdown_reason_bytes.
absl::Status ValidateShutdownRequest(const ShutdownRequest& request, const ControlLimits& limits);

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_NODE_INFO_VALIDATION_H_
