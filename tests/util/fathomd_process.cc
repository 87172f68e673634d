#include "tests/util/fathomd_process.h"

#include <sys/wait.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "platform/base/runfiles.h"

namespace fathom::testing {

absl::StatusOr<std::unique_ptr<Subprocess>> LaunchFathomd(int node_id, const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {RunfilePath("server/fathomd"), absl::StrCat("--node_id=", node_id)};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return Subprocess::Start(argv);
}

absl::StatusOr<FathomdProcess> WaitForReady(int node_id, std::unique_ptr<Subprocess> process,
                                            absl::Duration ready_timeout) {
  auto line = process->ReadLine(ready_timeout);
  if (!line.ok()) {
    return absl::Status(line.status().code(), absl::StrCat("fathomd node ", node_id, ": ", line.status().message()));
  }
  const std::string prefix = absl::StrCat("READY node=", node_id, " control=");
  if (line->rfind(prefix, 0) != 0) {
    return absl::InternalError(absl::StrCat("fathomd node ", node_id, " printed '", *line, "' instead of READY"));
  }
  // The control address ends at the next field, if any (" metrics=..." with --metrics_port).
  const std::string rest = line->substr(prefix.size());
  return FathomdProcess{std::move(process), rest.substr(0, rest.find(' '))};
}

absl::StatusOr<FathomdProcess> StartFathomd(int node_id, const std::vector<std::string>& flags,
                                            absl::Duration ready_timeout) {
  auto process = LaunchFathomd(node_id, flags);
  if (!process.ok()) return process.status();
  return WaitForReady(node_id, std::move(*process), ready_timeout);
}

absl::StatusOr<FathomdExit> RunFathomdToExit(int node_id, const std::vector<std::string>& flags,
                                             const std::string& stderr_path, absl::Duration timeout) {
  // A shell redirects stderr and then becomes fathomd (exec), so the pid and exit code are fathomd's.
  std::vector<std::string> argv = {"/bin/sh", "-c", "err=$1; shift; exec \"$@\" 2>\"$err\"", "sh", stderr_path,
                                   RunfilePath("server/fathomd"), absl::StrCat("--node_id=", node_id)};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto process = Subprocess::Start(argv);
  if (!process.ok()) return process.status();
  FathomdExit exit;
  // Its stdout closes when it exits: a line, or end of file.
  auto line = (*process)->ReadLine(timeout);
  if (line.ok()) exit.stdout_line = *line;
  if (line.ok() && line->rfind("READY", 0) == 0) {
    return absl::DeadlineExceededError(absl::StrCat("fathomd node ", node_id, " started: ", *line));
  }
  auto status = (*process)->Wait(timeout);
  if (!status.ok()) return status.status();
  exit.exit_code = WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
  std::ifstream in(stderr_path);
  std::stringstream text;
  text << in.rdbuf();
  exit.stderr_text = text.str();
  return exit;
}

absl::StatusOr<std::unique_ptr<control::ControlClient>> ConnectControl(const std::string& address,
                                                                       const std::string& token,
                                                                       absl::Duration call_timeout) {
  control::ControlClientOptions options;
  options.target = address;
  options.cluster_token = token;
  options.call_timeout = call_timeout;
  return control::ControlClient::Create(options);
}

std::map<std::string, uint64_t> CountersOf(const std::string& address, const std::string& token) {
  auto client = ConnectControl(address, token, absl::Seconds(5));
  if (!client.ok()) return {};
  auto stats = (*client)->Stats();
  if (!stats.ok()) return {};
  return {stats->counters().begin(), stats->counters().end()};
}

}  // namespace fathom::testing
