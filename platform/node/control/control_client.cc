#include "platform/node/control/control_client.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "platform/node/control/cluster_token.h"
#include "platform/node/control/grpc_status.h"
#include "platform/node/control/host_port.h"
#include "platform/node/control/node_info_validation.h"
#include "platform/node/control/tls_credentials.h"

namespace fathom::control {

absl::StatusOr<std::unique_ptr<ControlClient>> ControlClient::Create(ControlClientOptions options) {
  absl::StatusOr<HostPort> target = ParseHostPort(options.target, PortZero::kRefused);
  if (!target.ok()) return target.status();
  if (absl::Status token = ValidateClusterToken(options.cluster_token); !token.ok()) return token;
  if (options.call_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("call_timeout must be positive");
  }
  if (options.limits.max_message_bytes == 0 || options.limits.max_message_bytes > (1u << 30)) {
    return absl::InvalidArgumentError("limits.max_message_bytes must be 1 byte to 1 GiB");
  }
  if (!options.tls_server_name.empty() && options.tls_ca_path.empty()) {
    return absl::InvalidArgumentError("tls_server_name is set but TLS is off (no tls_ca_path)");
  }
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(options.tls_ca_path);
  if (!credentials.ok()) return credentials.status();

  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(static_cast<int>(options.limits.max_message_bytes));
  arguments.SetMaxSendMessageSize(static_cast<int>(options.limits.max_message_bytes));
  if (!options.tls_server_name.empty()) arguments.SetSslTargetNameOverride(options.tls_server_name);
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(options.target, *credentials, arguments);
  std::unique_ptr<Control::Stub> stub = Control::NewStub(channel);
  return std::unique_ptr<ControlClient>(new ControlClient(std::move(options), std::move(stub)));
}

// A call that failed before reaching the server because the two sides disagree on TLS says little
// ("Socket closed", "Ssl handshake failed"): name the likely cause.
absl::Status ControlClient::Failed(const grpc::Status& status, std::string_view call) const {
  absl::Status failed = ToAbslStatus(status, call);
  if (!absl::IsUnavailable(failed)) return failed;
  const std::string message(failed.message());
  std::string hint;
  if (options_.tls_ca_path.empty() && absl::StrContains(message, "Socket closed")) {
    hint = " (if its control service uses TLS, give the CA it chains to: --tls_ca, or tls_ca in the cluster file)";
  } else if (!options_.tls_ca_path.empty() && absl::StrContains(message, "andshake")) {
    hint = absl::StrCat(" (TLS with CA ", options_.tls_ca_path,
                        ": does it serve plaintext? or a certificate that CA did not sign, for another name?)");
  }
  if (hint.empty()) return failed;
  return absl::Status(failed.code(), absl::StrCat(message, hint));
}

ControlClient::ControlClient(ControlClientOptions options, std::unique_ptr<Control::Stub> stub)
    : options_(std::move(options)), stub_(std::move(stub)) {}

void ControlClient::Prepare(grpc::ClientContext& context) const {
  context.AddMetadata(std::string(kTokenMetadataKey), options_.cluster_token);
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout));
}

absl::StatusOr<NodeInfo> ControlClient::Join(const NodeInfo& self) {
  grpc::ClientContext context;
  Prepare(context);
  JoinRequest request;
  *request.mutable_caller() = self;
  JoinResponse response;
  const std::string call = absl::StrCat("Control.Join to ", options_.target);
  grpc::Status status = stub_->Join(&context, request, &response);
  if (!status.ok()) return Failed(status, call);

  // The peer is checked against what this node is, exactly as the server checks callers.
  NodeInfoExpectations expect{self.cluster_name(), self.protocol_version(),
                              static_cast<fabric::FabricKind>(self.fabric_kind()), options_.limits};
  if (!response.has_callee()) return absl::InvalidArgumentError(absl::StrCat(call, ": reply has no callee"));
  absl::Status valid = ValidateNodeInfo(response.callee(), expect, "callee");
  if (!valid.ok()) return absl::InvalidArgumentError(absl::StrCat(call, ": bad reply: ", valid.message()));
  return std::move(*response.mutable_callee());
}

template <typename Request, typename Response, typename Method>
absl::StatusOr<Response> ControlClient::Unary(const char* name, const Request& request, Method method) {
  grpc::ClientContext context;
  Prepare(context);
  Response response;
  grpc::Status status = (stub_.get()->*method)(&context, request, &response);
  if (!status.ok()) return Failed(status, absl::StrCat("Control.", name, " to ", options_.target));
  return response;
}

absl::StatusOr<AllocateObjectResponse> ControlClient::AllocateObject(const AllocateObjectRequest& request) {
  return Unary<AllocateObjectRequest, AllocateObjectResponse>("AllocateObject", request, &Control::Stub::AllocateObject);
}

absl::StatusOr<ReadObjectResponse> ControlClient::ReadObject(const ReadObjectRequest& request) {
  return Unary<ReadObjectRequest, ReadObjectResponse>("ReadObject", request, &Control::Stub::ReadObject);
}

absl::StatusOr<PingPeerResponse> ControlClient::PingPeer(const PingPeerRequest& request) {
  return Unary<PingPeerRequest, PingPeerResponse>("PingPeer", request, &Control::Stub::PingPeer);
}

absl::StatusOr<CreateTableResponse> ControlClient::CreateTable(const CreateTableRequest& request) {
  return Unary<CreateTableRequest, CreateTableResponse>("CreateTable", request, &Control::Stub::CreateTable);
}

absl::StatusOr<DropTableResponse> ControlClient::DropTable(const DropTableRequest& request) {
  return Unary<DropTableRequest, DropTableResponse>("DropTable", request, &Control::Stub::DropTable);
}

absl::StatusOr<ResizeTableResponse> ControlClient::ResizeTable(const ResizeTableRequest& request) {
  return Unary<ResizeTableRequest, ResizeTableResponse>("ResizeTable", request, &Control::Stub::ResizeTable);
}

absl::StatusOr<ListTablesResponse> ControlClient::ListTables() {
  return Unary<ListTablesRequest, ListTablesResponse>("ListTables", ListTablesRequest(), &Control::Stub::ListTables);
}

absl::StatusOr<StatsResponse> ControlClient::Stats(bool replica_digests) {
  StatsRequest request;
  request.set_replica_digests(replica_digests);
  return Unary<StatsRequest, StatsResponse>("Stats", request, &Control::Stub::Stats);
}

absl::Status ControlClient::Shutdown(std::string_view reason) {
  grpc::ClientContext context;
  Prepare(context);
  ShutdownRequest request;
  request.set_reason(std::string(reason));
  ShutdownResponse response;
  grpc::Status status = stub_->Shutdown(&context, request, &response);
  if (!status.ok()) return Failed(status, absl::StrCat("Control.Shutdown to ", options_.target));
  return absl::OkStatus();
}

}  // namespace fathom::control
