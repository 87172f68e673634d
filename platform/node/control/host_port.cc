#include "platform/node/control/host_port.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fathom::control {
namespace {

absl::Status BadAddress(std::string_view address, const char* why) {
  return absl::InvalidArgumentError(
      absl::StrCat("address '", std::string(address), "': ", why, " (expected host:port or [ipv6]:port)"));
}

bool IsVisibleAscii(std::string_view s) {
  for (char c : s) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

// Why binding one resolved address failed, as a status naming `address`.
absl::Status BindFailure(const std::string& address, int error) {
  const std::string message = absl::StrCat("cannot listen on ", address, ": ", std::strerror(error));
  switch (error) {
    case EADDRINUSE:
      return absl::FailedPreconditionError(absl::StrCat(message, " (another process holds the port)"));
    case EADDRNOTAVAIL:
      return absl::InvalidArgumentError(absl::StrCat(message, " (not an address of this machine)"));
    case EACCES:
      return absl::PermissionDeniedError(message);
    default:
      return absl::UnavailableError(message);
  }
}

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(std::string_view address, PortZero port_zero) {
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return BadAddress(address, "no port");
  std::string_view host = address.substr(0, colon);
  const std::string_view port = address.substr(colon + 1);
  if (!host.empty() && host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return BadAddress(address, "unbalanced brackets");
    host = host.substr(1, host.size() - 2);
    if (host.find(':') == std::string_view::npos) return BadAddress(address, "brackets are for IPv6 literals");
  } else if (host.find(':') != std::string_view::npos) {
    return BadAddress(address, "an IPv6 literal needs brackets");
  }
  if (host.empty()) return BadAddress(address, "empty host");
  if (!IsVisibleAscii(host) || host.find_first_of("/[]") != std::string_view::npos) {
    return BadAddress(address, "bad character in host");
  }
  if (port.empty() || port.size() > 5) return BadAddress(address, "port is not a number from 0 to 65535");
  int number = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return BadAddress(address, "port is not a number from 0 to 65535");
    number = number * 10 + (c - '0');
  }
  if (number > 65535) return BadAddress(address, "port is not a number from 0 to 65535");
  if (number == 0 && port_zero == PortZero::kRefused) return BadAddress(address, "port 0");
  return HostPort{std::string(host), number};
}

std::string JoinHostPort(std::string_view host, int port) {
  if (host.find(':') != std::string_view::npos) return absl::StrCat("[", std::string(host), "]:", port);
  return absl::StrCat(std::string(host), ":", port);
}

absl::Status ExplainListenFailure(const HostPort& address) {
  const std::string name = JoinHostPort(address.host, address.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* results = nullptr;
  const std::string port = std::to_string(address.port);
  const int resolved = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &results);
  if (resolved != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot listen on ", name, ": host does not resolve (", gai_strerror(resolved), ")"));
  }
  absl::Status failure;
  for (addrinfo* ai = results; ai != nullptr && failure.ok(); ai = ai->ai_next) {
    const int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;  // e.g. no IPv6 on this machine; gRPC skips such families too
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) failure = BindFailure(name, errno);
    close(fd);
  }
  freeaddrinfo(results);
  if (!failure.ok()) return failure;
  return absl::UnavailableError(
      absl::StrCat("gRPC could not listen on ", name, ", though a plain bind there works now"));
}

}  // namespace fathom::control
