// ControlHandler: what a node does when a peer or a tool calls its control service.
//
// The ControlServer calls a handler only for calls that carried the right cluster token and whose
// request passed validation (node_info_validation.h), so a handler may trust the shape of what it gets;
// it still decides whether it wants the peer (e.g. a node id that clashes with a live member).
//
//   class NodeControl final : public ControlHandler {
//     absl::StatusOr<NodeInfo> OnJoin(const JoinRequest& request) override {
//       RETURN_IF_ERROR(ConnectTo(request.caller()));
//       return MyNodeInfo();
//     }
//     StatsResponse OnStats() override { return CollectCounters(); }
//     void OnShutdown(std::string_view reason) override { stop_requested_.Notify(); }
//   };
//
// Threading: gRPC calls these from its own threads, several at once; implementations must be
// thread-safe. They should return promptly: ControlServer::Stop waits for running handlers, and a caller
// past its deadline has already been told DEADLINE_EXCEEDED. OnShutdown in particular must only signal
// the node to stop — calling ControlServer::Stop from inside it would wait for itself.
#ifndef FATHOM_PLATFORM_NODE_CONTROL_CONTROL_HANDLER_H_
#define FATHOM_PLATFORM_NODE_CONTROL_CONTROL_HANDLER_H_

#include <string_view>

#include <vector>

#include "absl/status/statusor.h"
#include "platform/node/control/control.pb.h"

namespace fathom::control {

class ControlHandler {
 public:
  virtual ~ControlHandler() = default;

  // A validated peer wants to join. Returns this node's NodeInfo, or an error the caller receives with
  // the same code (e.g. FailedPrecondition for a node id already taken).
  virtual absl::StatusOr<NodeInfo> OnJoin(const JoinRequest& request) = 0;

  // This node's counters, node id, incarnation and uptime. The server adds its own "control.*" counters.
  virtual StatsResponse OnStats() = 0;
  // The digests of every replica this node holds (StatsRequest.replica_digests); none by default.
  virtual absl::StatusOr<std::vector<ReplicaDigest>> OnReplicaDigests() { return std::vector<ReplicaDigest>{}; }

  // Someone holding the token asked this node to stop; `reason` is at most
  // ControlLimits::max_shutdown_reason_bytes long.
  virtual void OnShutdown(std::string_view reason) = 0;

  // Admin calls (validated: sizes bounded, node ids non-zero). Unimplemented unless the node provides them.
  virtual absl::StatusOr<AllocateObjectResponse> OnAllocateObject(const AllocateObjectRequest& request) {
    return absl::UnimplementedError("AllocateObject");
  }
  virtual absl::StatusOr<ReadObjectResponse> OnReadObject(const ReadObjectRequest& request) {
    return absl::UnimplementedError("ReadObject");
  }
  virtual absl::StatusOr<PingPeerResponse> OnPingPeer(const PingPeerRequest& request) {
    return absl::UnimplementedError("PingPeer");
  }
  // Table calls (validated: table_validation.h). They may take a while (a create writes every bucket).
  virtual absl::StatusOr<CreateTableResponse> OnCreateTable(const CreateTableRequest& request) {
    return absl::UnimplementedError("CreateTable");
  }
  virtual absl::StatusOr<DropTableResponse> OnDropTable(const DropTableRequest& request) {
    return absl::UnimplementedError("DropTable");
  }
  virtual absl::StatusOr<ListTablesResponse> OnListTables(const ListTablesRequest& request) {
    return absl::UnimplementedError("ListTables");
  }
  virtual absl::StatusOr<ResizeTableResponse> OnResizeTable(const ResizeTableRequest& request) {
    return absl::UnimplementedError("ResizeTable");
  }
};

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_CONTROL_HANDLER_H_
