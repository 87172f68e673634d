#include "bench/ycsb/server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"

namespace fathom::ycsb {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// fork + exec with stdio on /dev/null. Everything the child touches is prepared before fork: after fork
// in a threaded process only async-signal-safe calls are allowed.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> c_argv;
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);  // the parent died before prctl took effect
    const int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      dup2(null_fd, 0);
      dup2(null_fd, 1);
      dup2(null_fd, 2);
    }
    execv(c_argv[0], c_argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

absl::StatusOr<int> PickFreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in addr = Loopback(0);
  socklen_t length = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    const int error = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("bind to a free port: ", std::strerror(error)));
  }
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

bool LoopbackPortAccepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr = Loopback(port);
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return connected;
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::StartRedis(const std::string& binary) {
  return Start({binary, "--port", "{port}", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning"});
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::StartMemcached(const std::string& binary,
                                                                             bool large_pages) {
  // 4 GiB of item memory (taken as it is used): a million 1 KB YCSB records need ~1.2 GiB, and an evicted
  // record would read as NOT_FOUND, not as a slower cache.
  std::vector<std::string> argv = {binary, "-l", "127.0.0.1", "-p", "{port}", "-U", "0", "-t", "1", "-m", "4096"};
  // memcached refuses to run as root unless told which user to be.
  if (geteuid() == 0) argv.insert(argv.end(), {"-u", "root"});
  if (large_pages) argv.push_back("-L");
  return Start(argv);
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(const std::vector<std::string>& argv_template,
                                                                    absl::Duration ready_timeout) {
  if (argv_template.empty() || access(argv_template[0].c_str(), X_OK) != 0) {
    return absl::NotFoundError(
        absl::StrCat("server binary '", argv_template.empty() ? "" : argv_template[0], "' is not executable"));
  }
  absl::Status last_error;
  for (int attempt = 0; attempt < 5; ++attempt) {
    absl::StatusOr<int> port = PickFreeLoopbackPort();
    if (!port.ok()) return port.status();
    std::vector<std::string> argv;
    for (const std::string& arg : argv_template) {
      argv.push_back(absl::StrReplaceAll(arg, {{"{port}", std::to_string(*port)}}));
    }
    absl::StatusOr<pid_t> pid = Spawn(argv);
    if (!pid.ok()) return pid.status();
    std::unique_ptr<ServerProcess> server(new ServerProcess(*pid, *port));
    const absl::Time deadline = absl::Now() + ready_timeout;
    while (absl::Now() < deadline) {
      int wait_status;
      if (waitpid(*pid, &wait_status, WNOHANG) == *pid) {
        server->reaped_ = true;
        last_error = absl::UnavailableError(absl::StrCat(argv[0], " exited (status ", wait_status,
                                                         ") before listening on port ", *port));
        break;
      }
      if (LoopbackPortAccepts(*port)) return server;
      absl::SleepFor(absl::Milliseconds(10));
    }
    if (!server->reaped_) {
      return absl::DeadlineExceededError(
          absl::StrCat(argv[0], " did not listen on port ", *port, " within ", absl::FormatDuration(ready_timeout)));
    }
  }
  return last_error;
}

void ServerProcess::Stop(absl::Duration grace) {
  if (reaped_) return;
  kill(pid_, SIGTERM);
  const absl::Time deadline = absl::Now() + grace;
  int wait_status;
  while (absl::Now() < deadline) {
    if (waitpid(pid_, &wait_status, WNOHANG) == pid_) {
      reaped_ = true;
      return;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &wait_status, 0);
  reaped_ = true;
}

ServerProcess::~ServerProcess() { Stop(); }

}  // namespace fathom::ycsb
