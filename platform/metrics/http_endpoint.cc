#include "platform/metrics/http_endpoint.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/base/listen_socket.h"
#include "platform/metrics/http_request.h"

namespace fathom::metrics {
namespace {

constexpr std::string_view kPath = "/metrics";

// Waits until `fd` is ready for `events` or `deadline` passed; false on timeout or error.
bool WaitFor(int fd, short events, absl::Time deadline) {
  while (true) {
    const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

bool WriteAll(int fd, std::string_view data, absl::Time deadline) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!WaitFor(fd, POLLOUT, deadline)) return false;
    } else {
      return false;
    }
  }
  return true;
}

std::string Response(int status, std::string_view body, bool with_body) {
  std::string response = absl::StrCat("HTTP/1.1 ", status, " ", std::string(ReasonPhrase(status)), "\r\n");
  if (status == 405) absl::StrAppend(&response, "Allow: GET, HEAD\r\n");
  absl::StrAppend(&response,
                  status == 200 ? "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                                : "Content-Type: text/plain; charset=utf-8\r\n",
                  "Content-Length: ", body.size(), "\r\nConnection: close\r\n\r\n");
  if (with_body) response.append(body);
  return response;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(HttpEndpointOptions options,
                                                                   std::function<std::string()> page) {
  if (options.read_timeout <= absl::ZeroDuration() || options.max_request_bytes < 64) {
    return absl::InvalidArgumentError("the metrics endpoint needs a positive read timeout and ≥ 64 request bytes");
  }
  if (!page) return absl::InvalidArgumentError("the metrics endpoint needs a page");
  absl::StatusOr<ListeningSocket> socket = ListenTcp(options.host, options.port, 16);
  if (!socket.ok()) {
    return absl::Status(socket.status().code(), absl::StrCat("metrics endpoint: ", socket.status().message()));
  }
  std::unique_ptr<HttpEndpoint> endpoint(new HttpEndpoint());
  endpoint->listen_fd_ = socket->fd;
  endpoint->port_ = socket->port;
  endpoint->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (endpoint->wake_fd_ < 0) return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  endpoint->options_ = std::move(options);
  endpoint->page_ = std::move(page);
  HttpEndpoint* self = endpoint.get();
  endpoint->thread_ = std::thread([self] { self->Serve(); });
  return endpoint;
}

HttpEndpoint::~HttpEndpoint() {
  Stop();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void HttpEndpoint::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
  }
  if (thread_.joinable()) thread_.join();
}

HttpEndpointCounters HttpEndpoint::counters() const {
  return {pages_.load(std::memory_order_relaxed), refused_.load(std::memory_order_relaxed),
          dropped_.load(std::memory_order_relaxed)};
}

void HttpEndpoint::Serve() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    const int connection = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (connection < 0) continue;  // the client went away before we took it (or fds ran out: try later)
    Answer(connection);
    close(connection);
  }
}

void HttpEndpoint::Answer(int connection) {
  const absl::Time deadline = absl::Now() + options_.read_timeout;
  std::string received;
  RequestLine line;
  RequestState state = RequestState::kIncomplete;
  char buffer[1024];
  while (state == RequestState::kIncomplete && received.size() <= options_.max_request_bytes) {
    const ssize_t n = recv(connection, buffer, sizeof(buffer), 0);
    if (n > 0) {
      received.append(buffer, static_cast<size_t>(n));
      state = ParseRequest(received, line);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!WaitFor(connection, POLLIN, deadline)) break;
    } else {
      break;  // closed or reset before the request ended
    }
  }
  int status = 0;
  if (state == RequestState::kMalformed) {
    status = 400;
  } else if (state == RequestState::kComplete) {
    status = StatusFor(line, kPath);
  } else if (received.size() > options_.max_request_bytes) {
    status = 431;
  } else {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::string body;
  if (status == 200) {
    body = page_();
  } else {
    body = absl::StrCat(std::string(ReasonPhrase(status)),
                        status == 404 ? absl::StrCat(": the metrics are at ", std::string(kPath)) : "", "\n");
  }
  const bool sent = WriteAll(connection, Response(status, body, line.method != "HEAD"),
                             absl::Now() + options_.read_timeout);
  if (!sent) dropped_.fetch_add(1, std::memory_order_relaxed);
  else if (status == 200) pages_.fetch_add(1, std::memory_order_relaxed);
  else refused_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace fathom::metrics
