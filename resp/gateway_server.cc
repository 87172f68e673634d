#include "resp/gateway_server.h"

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
#include "platform/base/listen_socket.h"
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
  if (options.max_clients == 0) return absl::InvalidArgumentError("--max_clients must be at least 1");
  if (context.client == nullptr || context.table == nullptr) {
    return absl::InvalidArgumentError("the gateway needs a client and a table");
  }
  absl::StatusOr<ListeningSocket> socket = ListenTcp(options.host, options.port, 511);
  if (!socket.ok()) return socket.status();
  std::unique_ptr<GatewayServer> server(new GatewayServer(options, context));
  server->listen_fd_ = socket->fd;
  server->port_ = socket->port;
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
