// ServerProcess: starts memcached or redis-server on a free loopback port for the driver and the
// tests, waits until it accepts connections, and stops it (SIGTERM, then SIGKILL) when destroyed.
// The child gets PR_SET_PDEATHSIG, so a crashed driver does not leave servers behind.
//
//   ASSIGN_OR_RETURN(auto redis, ServerProcess::StartRedis());
//   RedisBackend db("127.0.0.1", redis->port());
#ifndef FATHOM_BENCH_YCSB_SERVER_PROCESS_H_
#define FATHOM_BENCH_YCSB_SERVER_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fathom::ycsb {

class ServerProcess {
 public:
  // redis-server with persistence off (--save "" --appendonly no), bound to 127.0.0.1.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> StartRedis(
      const std::string& binary = "/usr/bin/redis-server");
  // memcached with one worker thread (-t 1, as ENVIRONMENT.md's baseline), 4 GiB of memory, UDP off;
  // `large_pages` adds -L (its item memory on huge pages where the host has them).
  static absl::StatusOr<std::unique_ptr<ServerProcess>> StartMemcached(
      const std::string& binary = "/usr/bin/memcached", bool large_pages = false);

  // Starts `argv` with "{port}" in any argument replaced by a free port; retries with a new port if the
  // child dies before it listens (another process may take a port between our probe and its bind).
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(const std::vector<std::string>& argv_template,
                                                              absl::Duration ready_timeout = absl::Seconds(10));

  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // SIGTERM, wait up to `grace`, then SIGKILL. Idempotent.
  void Stop(absl::Duration grace = absl::Seconds(5));

 private:
  ServerProcess(pid_t pid, int port) : pid_(pid), port_(port) {}
  pid_t pid_;
  int port_;
  bool reaped_ = false;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
absl::StatusOr<int> PickFreeLoopbackPort();
// True if something accepts TCP connections on 127.0.0.1:port.
bool LoopbackPortAccepts(int port);

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_SERVER_PROCESS_H_
