// ControlServer: hosts a node's gRPC control service (Join, Stats, Shutdown) on a "host:port".
//
// Every call must carry the cluster token in metadata "x-fathom-token" (cluster_token.h); every request
// is validated (node_info_validation.h); only then is the ControlHandler called. TLS is on when a
// certificate and key are configured. docs/formats/control.md has the messages and the rules.
//
//   ControlServerOptions options;
//   options.listen_address = "0.0.0.0:0";                   // port 0: the kernel picks one
//   options.cluster_name = "prod";
//   options.cluster_token = token_from_flag;                // 16..1024 visible ASCII characters
//   options.fabric_kind = fabric::FabricKind::kUcx;
//   options.tls = {.certificate_path = "node.crt", .private_key_path = "node.key"};   // optional
//   ASSIGN_OR_RETURN(std::unique_ptr<ControlServer> server, ControlServer::Start(options, &handler));
//   Advertise(server->port());
//   ...
//   server->Stop();                                         // or let it go out of scope
#ifndef FATHOM_PLATFORM_NODE_CONTROL_CONTROL_SERVER_H_
#define FATHOM_PLATFORM_NODE_CONTROL_CONTROL_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "platform/fabric/wire.h"
#include "platform/node/control/control_handler.h"
#include "platform/node/control/control_limits.h"
#include "platform/node/control/control_service.h"
#include "platform/node/control/tls_credentials.h"

namespace fathom::control {

struct ControlServerOptions {
  // "host:port" or "[ipv6]:port"; port 0 picks a free port (see ControlServer::port()).
  std::string listen_address = "127.0.0.1:0";
  // Peers must name this cluster, speak this protocol version and use this kind of fabric.
  std::string cluster_name;
  uint32_t protocol_version = kControlProtocolVersion;
  fabric::FabricKind fabric_kind = fabric::FabricKind::kUcx;
  // The shared secret every call must present (cluster_token.h).
  std::string cluster_token;
  // TLS when both paths are set; plaintext when both are empty.
  ServerTlsFiles tls;
  ControlLimits limits;
  // Stop lets running calls finish for this long, then cancels them (and still waits for the handlers).
  absl::Duration stop_grace = absl::Seconds(2);
  // Upper bound on gRPC's threads for this server; calls beyond it fail with RESOURCE_EXHAUSTED.
  int max_threads = 16;
};

class ControlServer {
 public:
  // Checks the options, reads the TLS files, binds and starts serving. Errors: InvalidArgument for bad
  // options or a bad address (unparsable, unresolvable, not local); FailedPrecondition when the port is
  // in use; the file's errno status (NotFound, PermissionDenied, ...) for an unreadable TLS file.
  // `handler` must outlive the server.
  static absl::StatusOr<std::unique_ptr<ControlServer>> Start(const ControlServerOptions& options,
                                                              ControlHandler* handler);
  ~ControlServer();  // Stop()

  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // The port it listens on (the chosen one if the address said 0), and "host:port" with it.
  int port() const { return port_; }
  const std::string& address() const { return address_; }
  bool tls() const { return tls_; }

  // Stops accepting calls, cancels those still running after stop_grace, and waits for the handlers
  // to return. Idempotent. Must not be called from inside a handler.
  void Stop();

  ControlServerCounters counters() const { return service_->counters(); }

 private:
  ControlServer(std::unique_ptr<ControlService> service, absl::Duration stop_grace);

  const std::unique_ptr<ControlService> service_;
  const absl::Duration stop_grace_;
  std::unique_ptr<grpc::Server> server_;  // set once by Start, before the object is shared
  int port_ = 0;
  std::string address_;
  bool tls_ = false;
  absl::Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
};

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_CONTROL_SERVER_H_
