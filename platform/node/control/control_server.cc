#include "platform/node/control/control_server.h"

#include <chrono>
#include <utility>

#include <grpcpp/resource_quota.h>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "platform/node/control/cluster_token.h"
#include "platform/node/control/host_port.h"

namespace fathom::control {
namespace {

absl::Status CheckOptions(const ControlServerOptions& options) {
  if (absl::Status token = ValidateClusterToken(options.cluster_token); !token.ok()) return token;
  if (options.cluster_name.empty() || options.cluster_name.size() > options.limits.max_cluster_name_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("cluster name must be 1 to ",
                                                   options.limits.max_cluster_name_bytes, " bytes"));
  }
  if (options.protocol_version == 0) return absl::InvalidArgumentError("protocol version 0");
  if (options.fabric_kind != fabric::FabricKind::kUcx && options.fabric_kind != fabric::FabricKind::kSim) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown fabric kind ", static_cast<int>(options.fabric_kind)));
  }
  // gRPC's synchronous server keeps up to two threads polling for calls; it needs room to run one.
  if (options.max_threads < 2) return absl::InvalidArgumentError("max_threads must be at least 2");
  if (options.limits.max_message_bytes == 0 || options.limits.max_message_bytes > (1u << 30)) {
    return absl::InvalidArgumentError("limits.max_message_bytes must be 1 byte to 1 GiB");
  }
  if (options.stop_grace < absl::ZeroDuration()) return absl::InvalidArgumentError("negative stop_grace");
  return absl::OkStatus();
}

}  // namespace

ControlServer::ControlServer(std::unique_ptr<ControlService> service, absl::Duration stop_grace)
    : service_(std::move(service)), stop_grace_(stop_grace) {}

absl::StatusOr<std::unique_ptr<ControlServer>> ControlServer::Start(const ControlServerOptions& options,
                                                                    ControlHandler* handler) {
  if (handler == nullptr) return absl::InvalidArgumentError("ControlServer needs a handler");
  if (absl::Status valid = CheckOptions(options); !valid.ok()) return valid;
  absl::StatusOr<HostPort> listen = ParseHostPort(options.listen_address, PortZero::kAllowed);
  if (!listen.ok()) return listen.status();
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = MakeServerCredentials(options.tls);
  if (!credentials.ok()) return credentials.status();

  NodeInfoExpectations expectations{options.cluster_name, options.protocol_version, options.fabric_kind,
                                    options.limits};
  auto service = std::make_unique<ControlService>(options.cluster_token, std::move(expectations), handler);
  std::unique_ptr<ControlServer> server(new ControlServer(std::move(service), options.stop_grace));

  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen_address, *credentials, &server->port_);
  builder.RegisterService(server->service_.get());
  // gRPC sets SO_REUSEPORT by default, which would let a second server share a busy port silently.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.limits.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(options.limits.max_message_bytes));
  grpc::ResourceQuota quota("fathom-control");
  quota.SetMaxThreads(options.max_threads);
  builder.SetResourceQuota(quota);

  server->server_ = builder.BuildAndStart();
  // gRPC reports a failed bind only as a null server (or port 0); find out why for the caller.
  if (server->server_ == nullptr || server->port_ == 0) {
    absl::Status why = ExplainListenFailure(*listen);
    if (options.tls.enabled() && why.code() == absl::StatusCode::kUnavailable) {
      return absl::InvalidArgumentError(absl::StrCat(
          why.message(), "; TLS is on: check that the certificate and key are valid PEM and belong together"));
    }
    return why;
  }
  server->address_ = JoinHostPort(listen->host, server->port_);
  server->tls_ = options.tls.enabled();
  return server;
}

ControlServer::~ControlServer() { Stop(); }

void ControlServer::Stop() {
  MutexLock lock(&stop_mu_);
  if (stopped_ || server_ == nullptr) return;
  stopped_ = true;
  server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(stop_grace_));
  server_->Wait();
}

}  // namespace fathom::control
