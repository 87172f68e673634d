#include "tests/util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fathom::testing {

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(const std::vector<std::string>& argv) {
  if (argv.empty()) return absl::InvalidArgumentError("empty argv");
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  if (pid == 0) {
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  return std::unique_ptr<Subprocess>(new Subprocess(pid, in[1], out[0]));
}

Subprocess::~Subprocess() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (stdin_fd_ >= 0) close(stdin_fd_);
  close(stdout_fd_);
}

absl::StatusOr<std::string> Subprocess::ReadLine(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(absl::StrCat("no line from pid ", pid_, " within ", absl::FormatDuration(timeout)));
    }
    pollfd fd{stdout_fd_, POLLIN, 0};
    int ready = poll(&fd, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char chunk[4096];
    ssize_t n = read(stdout_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError(absl::StrCat("pid ", pid_, " closed its stdout"));
    buffer_.append(chunk, n);
  }
}

absl::Status Subprocess::WriteLine(const std::string& line) {
  std::string data = line + "\n";
  if (write(stdin_fd_, data.data(), data.size()) != static_cast<ssize_t>(data.size())) {
    return absl::UnavailableError(absl::StrCat("write to pid ", pid_, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

void Subprocess::CloseStdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

void Subprocess::Signal(int signal) {
  if (!reaped_) kill(pid_, signal);
}

absl::StatusOr<int> Subprocess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      return status;
    }
    if (absl::Now() > deadline) return absl::DeadlineExceededError(absl::StrCat("pid ", pid_, " still running"));
    absl::SleepFor(absl::Milliseconds(5));
  }
}

}  // namespace fathom::testing
