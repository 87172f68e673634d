// "host:port" addresses for the control service, checked before gRPC sees them, so a typo is a clear
// InvalidArgument rather than a silent failure to bind or connect.
//
//   ASSIGN_OR_RETURN(HostPort listen, ParseHostPort("127.0.0.1:0", PortZero::kAllowed));   // server
//   ASSIGN_OR_RETURN(HostPort peer, ParseHostPort("[::1]:7000", PortZero::kRefused));      // client
//   std::string address = JoinHostPort(listen.host, 7000);                                 // "127.0.0.1:7000"
#ifndef FATHOM_PLATFORM_NODE_CONTROL_HOST_PORT_H_
#define FATHOM_PLATFORM_NODE_CONTROL_HOST_PORT_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fathom::control {

struct HostPort {
  std::string host;  // as written, without brackets: "127.0.0.1", "localhost", "::1"
  int port = 0;
};

// A listening server may ask the kernel to pick a port (0); a client must name one.
enum class PortZero { kAllowed, kRefused };

// Accepts "host:port" and "[ipv6]:port": a non-empty host of visible characters without '/' (IPv6
// literals only in brackets) and a decimal port up to 65535. InvalidArgument otherwise.
absl::StatusOr<HostPort> ParseHostPort(std::string_view address, PortZero port_zero);

// Puts brackets back around an IPv6 literal.
std::string JoinHostPort(std::string_view host, int port);

// After gRPC failed to listen on `address` (it does not say why), binds a plain socket there to find the
// reason: FailedPrecondition if the port is in use, InvalidArgument if the host does not resolve or is
// not an address of this machine, PermissionDenied for a privileged port, and a generic Unavailable if
// the probe itself succeeds. Never OK.
absl::Status ExplainListenFailure(const HostPort& address);

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_HOST_PORT_H_
