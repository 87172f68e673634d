#include "resp/gateway_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "resp/reply.h"

namespace fathom::resp {
namespace {

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GatewayServer>> GatewayServer::Start(const GatewayOptions& options,
                                                                     const SessionContext& context) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("--port ", options.port, " is not in 0..65535"));
  }
  if (options.max_clients == 0) return absl::InvalidArgumentError("--max_clients must be at least 1");
  if (context.client == nullptr || context.table == nullptr) {
    return absl::InvalidArgumentError("the gateway needs a client and a table");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = absl::StrCat(options.port);
  if (const int rc = getaddrinfo(options.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat("--host '", options.host, "' does not resolve: ", gai_strerror(rc)));
  }
  std::unique_ptr<GatewayServer> server(new GatewayServer(options, context));
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && server->listen_fd_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 511) == 0) {
      server->listen_fd_ = fd;
    } else {
      why = std::strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (server->listen_fd_ < 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.host, ":", options.port, ": ", why));
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(server->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  server->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                    : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  server->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (server->wake_fd_ < 0) return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  GatewayServer* self = server.get();
  server->acceptor_ = std::thread([self] { self->Accept(); });
  return server;
}

GatewayServer::~GatewayServer() {
  Stop();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void GatewayServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
  if (acceptor_.joinable()) acceptor_.join();
  std::list<Connection> connections;
  {
    MutexLock lock(&mu_);
    // Wakes every connection thread out of recv; each closes its own descriptor.
    for (Connection& c : connections_) {
      if (!c.done) shutdown(c.fd, SHUT_RDWR);
    }
    connections.swap(connections_);
  }
  for (Connection& c : connections) c.thread.join();
}

void GatewayServer::Accept() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    MutexLock lock(&mu_);
    Reap();
    if (connections_.size() >= options_.max_clients) {
      if (context_.stats != nullptr) context_.stats->refused_connections.fetch_add(1, std::memory_order_relaxed);
      std::string reply;
      AppendError(reply, "ERR max number of clients reached");
      (void)SendAll(fd, reply);
      close(fd);
      continue;
    }
    Connection& connection = connections_.emplace_back();
    connection.fd = fd;
    Connection* c = &connection;  // list elements stay where they are
    connection.thread = std::thread([this, c] { Serve(c); });
  }
}

void GatewayServer::Reap() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (!it->done) {
      ++it;
      continue;
    }
    it->thread.join();  // it is returning from Serve
    it = connections_.erase(it);
  }
}

void GatewayServer::Serve(Connection* connection) {
  const int fd = connection->fd;
  if (context_.stats != nullptr) {
    context_.stats->connected.fetch_add(1, std::memory_order_relaxed);
    context_.stats->connections.fetch_add(1, std::memory_order_relaxed);
  }
  Session session(context_);
  RequestParser parser(options_.limits);
  std::string out;
  char buffer[16 << 10];
  bool open = true;
  while (open && !session.closing()) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    parser.Feed(std::string_view(buffer, static_cast<size_t>(n)));
    out.clear();
    while (!session.closing()) {
      absl::StatusOr<std::optional<Command>> command = parser.Next();
      if (!command.ok()) {
        // Nothing after a malformed request can be read: answer as Redis does and close.
        AppendError(out, absl::StrCat("ERR ", command.status().message()));
        if (context_.stats != nullptr) context_.stats->protocol_errors.fetch_add(1, std::memory_order_relaxed);
        open = false;
        break;
      }
      if (!command->has_value()) break;
      session.Execute(**command, out);
    }
    if (!out.empty() && !SendAll(fd, out)) break;
  }
  {
    MutexLock lock(&mu_);
    close(fd);  // under the lock: Stop never shuts down a descriptor number that was reused
    connection->done = true;
  }
  // After `done`: a client that saw the count drop finds the place free.
  if (context_.stats != nullptr) context_.stats->connected.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace fathom::resp
