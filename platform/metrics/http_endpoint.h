// HttpEndpoint: serves one page over HTTP/1.1 at GET /metrics — fathomd's Prometheus endpoint
// (--metrics_port; docs/formats/metrics.md). A scrape is rare and small, so one thread serves one
// connection at a time and closes it after the answer.
//
//   HttpEndpointOptions options;                      // 127.0.0.1, a port the kernel picks
//   ASSIGN_OR_RETURN(auto endpoint, HttpEndpoint::Start(options, [&] { return page.Text(); }));
//   endpoint->port();                                 // where it listens
//
// Bad requests get an answer and lose nothing else: a request line that is not "METHOD PATH HTTP/1.x" is
// 400, a method other than GET or HEAD 405, another path 404, a request longer than max_request_bytes 431;
// a client that sends nothing for read_timeout is dropped. Each closes only that connection.
#ifndef FATHOM_PLATFORM_METRICS_HTTP_ENDPOINT_H_
#define FATHOM_PLATFORM_METRICS_HTTP_ENDPOINT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fathom::metrics {

struct HttpEndpointOptions {
  // A numeric address or a name of this machine ("0.0.0.0" or "::" to listen on every interface).
  std::string host = "127.0.0.1";
  int port = 0;  // 0: the kernel picks one (port() says which)
  absl::Duration read_timeout = absl::Seconds(5);
  size_t max_request_bytes = 8192;
};

struct HttpEndpointCounters {
  uint64_t pages = 0;          // 200 answers
  uint64_t refused = 0;        // 400, 404, 405, 431 answers
  uint64_t dropped = 0;        // connections closed without an answer (timeout, reset)
};

class HttpEndpoint {
 public:
  // The page is built for each GET on the endpoint's thread. InvalidArgument for bad options, Unavailable
  // (with the reason) if the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Start(HttpEndpointOptions options,
                                                             std::function<std::string()> page);
  ~HttpEndpoint();  // Stop()

  // Stops listening; waits for the connection being served. Idempotent.
  void Stop();
  int port() const { return port_; }
  HttpEndpointCounters counters() const;

 private:
  HttpEndpoint() = default;
  void Serve();
  void Answer(int connection);

  HttpEndpointOptions options_;
  std::function<std::string()> page_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Stop rings it
  int port_ = 0;
  std::thread thread_;
  bool stopped_ = false;
  std::atomic<uint64_t> pages_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace fathom::metrics

#endif  // FATHOM_PLATFORM_METRICS_HTTP_ENDPOINT_H_
