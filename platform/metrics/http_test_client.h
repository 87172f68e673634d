// Tests only: one HTTP exchange with a server on 127.0.0.1 over a plain socket, the way curl or
// Prometheus would make it.
#ifndef FATHOM_PLATFORM_METRICS_HTTP_TEST_CLIENT_H_
#define FATHOM_PLATFORM_METRICS_HTTP_TEST_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace fathom::metrics::testing {

// A connected socket to 127.0.0.1:port, or -1.
inline int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `request` (then closes the sending half if asked) and reads until the server closes; "connect
// failed" if nothing listens.
inline std::string Exchange(int port, const std::string& request, bool shut_write = false) {
  const int fd = ConnectLoopback(port);
  if (fd < 0) return "connect failed";
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer and close before reading everything
    sent += static_cast<size_t>(n);
  }
  if (shut_write) shutdown(fd, SHUT_WR);
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, static_cast<size_t>(n));
  close(fd);
  return response;
}

}  // namespace fathom::metrics::testing

#endif  // FATHOM_PLATFORM_METRICS_HTTP_TEST_CLIENT_H_
