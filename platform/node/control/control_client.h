// ControlClient: calls another node's control service (Join, Stats, Shutdown).
//
// Each call carries the cluster token and a deadline (call_timeout); gRPC errors come back as
// absl::Status with the same code (PERMISSION_DENIED → PermissionDenied, ...) and a message naming the
// call and the target. A Join reply is validated like a Join request (node_info_validation.h) against
// the caller's own cluster name, protocol version and fabric kind, so a bad peer cannot hand this node
// a malformed address or region descriptor either.
//
//   ControlClientOptions options;
//   options.target = "10.0.0.7:7000";
//   options.cluster_token = token_from_flag;
//   options.tls_ca_path = "ca.crt";                       // optional; plaintext when empty
//   ASSIGN_OR_RETURN(std::unique_ptr<ControlClient> peer, ControlClient::Create(options));
//   ASSIGN_OR_RETURN(NodeInfo theirs, peer->Join(mine));
//   ASSIGN_OR_RETURN(StatsResponse stats, peer->Stats());
//   RETURN_IF_ERROR(peer->Shutdown("rolling restart"));
//
// Thread-safe: calls may be made from several threads at once.
#ifndef FATHOM_PLATFORM_NODE_CONTROL_CONTROL_CLIENT_H_
#define FATHOM_PLATFORM_NODE_CONTROL_CONTROL_CLIENT_H_

#include <memory>
#include <string>
#include <string_view>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/node/control/control.grpc.pb.h"
#include "platform/node/control/control_limits.h"

namespace fathom::control {

struct ControlClientOptions {
  // "host:port" or "[ipv6]:port" of the peer's ControlServer.
  std::string target;
  std::string cluster_token;
  // TLS when set: the PEM CA certificates that the server's certificate must chain to.
  std::string tls_ca_path;
  // The name the server's certificate must carry; the target's host when empty. Set it when connecting
  // by IP address to a server whose certificate names its host.
  std::string tls_server_name;
  // Deadline of each call, from when it starts; a call that runs longer fails with DeadlineExceeded.
  absl::Duration call_timeout = absl::Seconds(5);
  // Bounds on the Join reply, and gRPC's message size limit.
  ControlLimits limits;
};

class ControlClient {
 public:
  // Checks the options and reads the CA file. Connects lazily, at the first call. InvalidArgument for a
  // bad target, token or timeout; the file's errno status (NotFound, ...) for an unreadable CA file.
  static absl::StatusOr<std::unique_ptr<ControlClient>> Create(ControlClientOptions options);

  // Sends this node's NodeInfo and returns the peer's, validated.
  absl::StatusOr<NodeInfo> Join(const NodeInfo& self);
  // With `replica_digests`, also the digest of every replica the node holds (StatsRequest).
  absl::StatusOr<StatsResponse> Stats(bool replica_digests = false);
  // OK means the peer accepted the request and has been told to stop; it may still be stopping.
  absl::Status Shutdown(std::string_view reason);
  absl::StatusOr<AllocateObjectResponse> AllocateObject(const AllocateObjectRequest& request);
  absl::StatusOr<ReadObjectResponse> ReadObject(const ReadObjectRequest& request);
  absl::StatusOr<PingPeerResponse> PingPeer(const PingPeerRequest& request);
  absl::StatusOr<CreateTableResponse> CreateTable(const CreateTableRequest& request);
  absl::StatusOr<DropTableResponse> DropTable(const DropTableRequest& request);
  absl::StatusOr<ListTablesResponse> ListTables();
  absl::StatusOr<ResizeTableResponse> ResizeTable(const ResizeTableRequest& request);

  const std::string& target() const { return options_.target; }

 private:
  ControlClient(ControlClientOptions options, std::unique_ptr<Control::Stub> stub);
  // A context with the token and this call's deadline.
  void Prepare(grpc::ClientContext& context) const;
  // The call's failure as an absl::Status naming `call`, with a hint when TLS settings seem to disagree.
  absl::Status Failed(const grpc::Status& status, std::string_view call) const;

  // One unary call: context with token and deadline, status mapped with the method's name.
  template <typename Request, typename Response, typename Method>
  absl::StatusOr<Response> Unary(const char* name, const Request& request, Method method);
  const ControlClientOptions options_;
  const std::unique_ptr<Control::Stub> stub_;
};

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_CONTROL_CLIENT_H_
