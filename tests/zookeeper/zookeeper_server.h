// ZooKeeperServer: a real, standalone ZooKeeper server (Debian's `zookeeper` package) for tests.
//
// It listens on a free loopback port, keeps its data in a fresh temporary directory and its output in
// `<dir>/zookeeper.log`; Start returns once a client has connected (bounded; the error carries the log's
// tail). Stop and Restart keep the port and the data directory, so clients can test reconnection. The
// destructor kills the server (SIGKILL) and reaps it; the child also gets SIGKILL if the test process
// dies (PR_SET_PDEATHSIG), so no java process outlives a test. Tests that use it are tagged "exclusive".
//
// Start turns the ZooKeeper C client's logging off in the whole test process (zoo_set_debug_level(0)):
// the client formats endpoints into a static buffer from several threads (a real race ThreadSanitizer
// reports inside libzookeeper_mt), and its connection-refused errors flood the logs of restart tests.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ZooKeeperServer> zk, ZooKeeperServer::Start());
//   zhandle_t* zh = zookeeper_init(zk->connect_string().c_str(), watcher, 10000, nullptr, nullptr, 0);
//   zk->Stop();                       // clients see the connection drop
//   RETURN_IF_ERROR(zk->Restart());   // same port, same data: sessions and znodes survive
#ifndef FATHOM_TESTS_ZOOKEEPER_ZOOKEEPER_SERVER_H_
#define FATHOM_TESTS_ZOOKEEPER_ZOOKEEPER_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fathom::testing {

struct ZooKeeperServerOptions {
  // The server's tick: sessions may last 2..20 ticks (the client asks, the server clamps).
  absl::Duration tick = absl::Milliseconds(500);
  // How long Start/Restart wait for a client to connect.
  absl::Duration start_timeout = absl::Seconds(30);
  std::string java = "/usr/bin/java";
  // zookeeper.jar's manifest names its dependencies; slf4j-simple makes it log (to the log file).
  std::string classpath = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar";
  // Parent of the data directory; empty: $TEST_TMPDIR, else /tmp.
  std::string temp_root;
};

class ZooKeeperServer {
 public:
  static absl::StatusOr<std::unique_ptr<ZooKeeperServer>> Start(ZooKeeperServerOptions options = {});
  ~ZooKeeperServer();  // kills the server, reaps it, removes the data directory

  ZooKeeperServer(const ZooKeeperServer&) = delete;
  ZooKeeperServer& operator=(const ZooKeeperServer&) = delete;

  // "127.0.0.1:<port>".
  std::string connect_string() const;
  int port() const { return port_; }
  // The server's process id while running, else 0.
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ != 0; }
  // The directory holding zoo.cfg, the data and the log; its path is on the java command line, which
  // lets a test find this server's process (see CountProcessesMentioning).
  const std::string& dir() const { return dir_; }

  // SIGTERM, then SIGKILL after 5 s; waits until the process is gone. No-op when stopped.
  void Stop();
  // SIGKILL right away (a crash). Committed data survives: the server syncs its log before replying.
  void Kill();
  // SIGSTOP; returns once the process is stopped. Its clients' connections stay open but go silent, so
  // a client notices only when its own timeout (2/3 of the session timeout) runs out.
  absl::Status Pause();
  // SIGCONT after Pause.
  void Resume();
  // Starts the server again on the same port with the same data; returns once a client connects.
  absl::Status Restart();

  // The last `bytes` of the server's log.
  std::string LogTail(size_t bytes = 4000) const;

 private:
  ZooKeeperServer(ZooKeeperServerOptions options, std::string dir, int port)
      : options_(std::move(options)), dir_(std::move(dir)), port_(port) {}
  absl::Status Launch();
  absl::Status WaitUntilServing();
  void Reap(absl::Duration grace);

  ZooKeeperServerOptions options_;
  std::string dir_;
  int port_;
  pid_t pid_ = 0;
};

// How many live processes have `needle` in their command line (reads /proc/*/cmdline; excludes this
// process). With a server's dir(), it counts that server's java processes.
int CountProcessesMentioning(const std::string& needle);

}  // namespace fathom::testing

#endif  // FATHOM_TESTS_ZOOKEEPER_ZOOKEEPER_SERVER_H_
