#include "platform/base/listen_socket.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fathom {

absl::StatusOr<ListeningSocket> ListenTcp(const std::string& host, int port, int backlog) {
  if (host.empty()) return absl::InvalidArgumentError("the host to listen on is empty");
  if (port < 0 || port > 65535) return absl::InvalidArgumentError(absl::StrCat("port ", port, " is not in 0..65535"));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat("host '", host, "' does not resolve: ", gai_strerror(rc)));
  }
  ListeningSocket result;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && result.fd < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, backlog) == 0) {
      result.fd = fd;
    } else {
      why = std::strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (result.fd < 0) return absl::UnavailableError(absl::StrCat("cannot listen on ", host, ":", port, ": ", why));
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(result.fd, reinterpret_cast<sockaddr*>(&bound), &length);
  result.port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                  : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return result;
}

}  // namespace fathom
