#include "tests/zookeeper/zookeeper_server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fathom::testing {
namespace {

// A loopback port nobody listens on right now (the kernel's choice for port 0).
absl::StatusOr<int> FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int e = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("bind 127.0.0.1:0: ", strerror(e)));
  }
  close(fd);
  return ntohs(addr.sin_port);
}

void QuietLog(const char*) {}

}  // namespace

absl::StatusOr<std::unique_ptr<ZooKeeperServer>> ZooKeeperServer::Start(ZooKeeperServerOptions options) {
  // Level 0 turns the client's logging off (see the header).
  zoo_set_debug_level(static_cast<ZooLogLevel>(0));
  for (const std::string& jar : {options.java}) {
    if (access(jar.c_str(), X_OK) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat(jar, " is not executable: install Java and ZooKeeper (tools/bootstrap.sh)"));
    }
  }
  std::string root = options.temp_root;
  if (root.empty()) {
    const char* t = std::getenv("TEST_TMPDIR");
    root = (t != nullptr && *t != '\0') ? t : "/tmp";
  }
  std::string tmpl = absl::StrCat(root, "/zookeeper.XXXXXX");
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", tmpl, ": ", strerror(errno)));
  }
  const std::string dir = buf.data();
  // Another process may take the port between FreePort and the server's bind: try a few ports.
  absl::Status last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::StatusOr<int> port = FreePort();
    if (!port.ok()) return port.status();
    std::unique_ptr<ZooKeeperServer> server(new ZooKeeperServer(options, dir, *port));
    last = server->Launch();
    if (last.ok()) return server;
    const bool port_taken = server->LogTail().find("Address already in use") != std::string::npos;
    server->Reap(absl::ZeroDuration());
    server->dir_.clear();  // keep the directory for the next attempt
    if (!port_taken) break;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return last;
}

ZooKeeperServer::~ZooKeeperServer() {
  Reap(absl::ZeroDuration());
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string ZooKeeperServer::connect_string() const { return absl::StrCat("127.0.0.1:", port_); }

absl::Status ZooKeeperServer::Launch() {
  const std::string cfg = absl::StrCat(dir_, "/zoo.cfg");
  {
    std::ofstream out(cfg, std::ios::trunc);
    out << "tickTime=" << absl::ToInt64Milliseconds(options_.tick) << "\n"
        << "dataDir=" << dir_ << "/data\n"
        << "clientPort=" << port_ << "\n"
        << "clientPortAddress=127.0.0.1\n"
        << "admin.enableServer=false\n"
        << "maxClientCnxns=0\n";
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", cfg));
  }
  const std::string log = absl::StrCat(dir_, "/zookeeper.log");
  std::vector<std::string> argv = {options_.java,
                                   "-Xmx256m",
                                   "-XX:+UseSerialGC",
                                   "-XX:TieredStopAtLevel=1",
                                   "-Dzookeeper.jmx.log4j.disable=true",
                                   "-cp",
                                   options_.classpath,
                                   "org.apache.zookeeper.server.ZooKeeperServerMain",
                                   cfg};
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  if (pid == 0) {
    // Die with the test, even if it crashes.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  pid_ = pid;
  return WaitUntilServing();
}

absl::Status ZooKeeperServer::WaitUntilServing() {
  const absl::Time deadline = absl::Now() + options_.start_timeout;
  zhandle_t* zh = zookeeper_init2(connect_string().c_str(), nullptr, 4000, nullptr, nullptr, 0, QuietLog);
  if (zh == nullptr) return absl::InternalError(absl::StrCat("zookeeper_init: ", strerror(errno)));
  absl::Status status;
  while (true) {
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = 0;
      status = absl::UnavailableError(absl::StrCat("ZooKeeper server exited (wait status ", wstatus,
                                                   ") before serving on ", connect_string(), "; log tail:\n",
                                                   LogTail()));
      break;
    }
    // A session needs the server fully started (it answers only then), not just the port bound.
    if (zoo_state(zh) == ZOO_CONNECTED_STATE) break;
    if (absl::Now() > deadline) {
      status = absl::DeadlineExceededError(absl::StrCat("ZooKeeper server on ", connect_string(),
                                                        " accepted no client within ",
                                                        absl::FormatDuration(options_.start_timeout),
                                                        "; log tail:\n", LogTail()));
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  zookeeper_close(zh);
  return status;
}

void ZooKeeperServer::Reap(absl::Duration grace) {
  if (pid_ == 0) return;
  if (grace > absl::ZeroDuration()) {
    kill(pid_, SIGTERM);
    kill(pid_, SIGCONT);  // a paused server would not see the SIGTERM
    const absl::Time deadline = absl::Now() + grace;
    while (absl::Now() < deadline) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = 0;
        return;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = 0;
}

void ZooKeeperServer::Stop() { Reap(absl::Seconds(5)); }

void ZooKeeperServer::Kill() { Reap(absl::ZeroDuration()); }

absl::Status ZooKeeperServer::Pause() {
  if (pid_ == 0) return absl::FailedPreconditionError("ZooKeeper server is not running");
  if (kill(pid_, SIGSTOP) != 0) return absl::InternalError(absl::StrCat("kill(SIGSTOP): ", strerror(errno)));
  int status = 0;
  if (waitpid(pid_, &status, WUNTRACED) != pid_ || !WIFSTOPPED(status)) {
    return absl::InternalError("the ZooKeeper server did not stop");
  }
  return absl::OkStatus();
}

void ZooKeeperServer::Resume() {
  if (pid_ != 0) kill(pid_, SIGCONT);
}

absl::Status ZooKeeperServer::Restart() {
  if (pid_ != 0) return absl::FailedPreconditionError("ZooKeeper server is running");
  return Launch();
}

std::string ZooKeeperServer::LogTail(size_t bytes) const {
  std::ifstream in(absl::StrCat(dir_, "/zookeeper.log"), std::ios::binary);
  if (!in) return "(no log)";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  return all.size() <= bytes ? all : all.substr(all.size() - bytes);
}

int CountProcessesMentioning(const std::string& needle) {
  int count = 0;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  const std::string self = std::to_string(getpid());
  while (dirent* entry = readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos || name == self) continue;
    std::ifstream in("/proc/" + name + "/cmdline", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string cmdline = ss.str();
    if (cmdline.find(needle) != std::string::npos) ++count;
  }
  closedir(proc);
  return count;
}

}  // namespace fathom::testing
