// A listening TCP socket on host:port, for the small servers that are not gRPC (the metrics endpoint, the
// RESP gateway), with the reason when it cannot be had.
//
//   ASSIGN_OR_RETURN(ListeningSocket socket, ListenTcp("127.0.0.1", 0, 16));   // socket.port: the one taken
#ifndef FATHOM_PLATFORM_BASE_LISTEN_SOCKET_H_
#define FATHOM_PLATFORM_BASE_LISTEN_SOCKET_H_

#include <string>

#include "absl/status/statusor.h"

namespace fathom {

struct ListeningSocket {
  int fd = -1;   // the caller closes it
  int port = 0;  // the port bound (the kernel's pick for port 0)
};

// InvalidArgument for an empty host, a port outside 0..65535 or a host that does not resolve;
// Unavailable with the system's reason (address in use, ...) if no address of the host could be bound.
absl::StatusOr<ListeningSocket> ListenTcp(const std::string& host, int port, int backlog);

}  // namespace fathom

#endif  // FATHOM_PLATFORM_BASE_LISTEN_SOCKET_H_
