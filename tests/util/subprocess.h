// Subprocess: starts a helper process for multi-process tests, talks to it over its stdin/stdout, and
// kills it. The child's stdin is a pipe, so a child that watches for EOF exits when the test dies.
//
//   ASSIGN_OR_RETURN(auto peer, Subprocess::Start({binary, "--flag=1"}));
//   ASSIGN_OR_RETURN(std::string line, peer->ReadLine(absl::Seconds(10)));
//   peer->Kill(SIGKILL);
#ifndef FATHOM_TESTS_UTIL_SUBPROCESS_H_
#define FATHOM_TESTS_UTIL_SUBPROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fathom::testing {

class Subprocess {
 public:
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(const std::vector<std::string>& argv);
  ~Subprocess();  // kills the child (SIGKILL) if it is still running and reaps it

  // Reads one line from the child's stdout (without the newline).
  absl::StatusOr<std::string> ReadLine(absl::Duration timeout);
  absl::Status WriteLine(const std::string& line);
  void CloseStdin();
  void Signal(int signal);
  // Waits for the child to exit; returns its wait status (see waitpid).
  absl::StatusOr<int> Wait(absl::Duration timeout);
  pid_t pid() const { return pid_; }

 private:
  Subprocess(pid_t pid, int in, int out) : pid_(pid), stdin_fd_(in), stdout_fd_(out) {}
  pid_t pid_;
  int stdin_fd_;
  int stdout_fd_;
  bool reaped_ = false;
  std::string buffer_;
};

}  // namespace fathom::testing

#endif  // FATHOM_TESTS_UTIL_SUBPROCESS_H_
