// GatewayServer: the RESP gateway's listener. One thread accepts; each connection gets a thread of its own
// that reads commands (RequestParser), runs them in its Session, and writes the replies of everything
// read at once in one go (so pipelined commands cost one write). Malformed input gets an error reply and
// closes that connection only; past max_clients a new connection is told so and closed.
#ifndef FATHOM_RESP_GATEWAY_SERVER_H_
#define FATHOM_RESP_GATEWAY_SERVER_H_

#include <list>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "resp/request_parser.h"
#include "resp/session.h"

namespace fathom::resp {

struct GatewayOptions {
  std::string host = "127.0.0.1";  // 0.0.0.0 or :: for every interface
  int port = 6380;                 // 0: a free port (port() says which)
  size_t max_clients = 1000;
  ParserLimits limits;
};

class GatewayServer {
 public:
  // `context` (client, table, password, stats) must outlive the server.
  static absl::StatusOr<std::unique_ptr<GatewayServer>> Start(const GatewayOptions& options,
                                                              const SessionContext& context);
  ~GatewayServer();  // Stop()

  // Stops accepting, closes every connection (a command running finishes first), joins the threads.
  void Stop();
  int port() const { return port_; }

 private:
  GatewayServer(const GatewayOptions& options, const SessionContext& context) : options_(options), context_(context) {}
  struct Connection {
    int fd = -1;
    bool done = false;  // Serve returns: the thread can be joined
    std::thread thread;
  };
  void Accept();
  void Serve(Connection* connection);
  // Joins the threads of connections that ended.
  void Reap() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const GatewayOptions options_;
  const SessionContext& context_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  absl::Mutex mu_;
  std::list<Connection> connections_ ABSL_GUARDED_BY(mu_);
  bool stopped_ = false;
};

}  // namespace fathom::resp

#endif  // FATHOM_RESP_GATEWAY_SERVER_H_
