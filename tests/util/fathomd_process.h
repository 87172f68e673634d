// Starting a fathomd process in a test and waiting until it serves: it prints
// "READY node=<id> control=<host:port>" on stdout (server/fathomd_main.cc) once it has joined.
//
//   ASSIGN_OR_RETURN(FathomdProcess node, StartFathomd(1, {"--token=...", "--transports=sm"}));
//   ASSIGN_OR_RETURN(auto client, ConnectControl(node.control_address, token));
#ifndef FATHOM_TESTS_UTIL_FATHOMD_PROCESS_H_
#define FATHOM_TESTS_UTIL_FATHOMD_PROCESS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/node/control/control_client.h"
#include "tests/util/subprocess.h"

namespace fathom::testing {

struct FathomdProcess {
  std::unique_ptr<Subprocess> process;
  std::string control_address;  // host:port of its control service
};

// Runs fathomd (from the runfiles) with --node_id=`node_id` and `flags`, and waits for its READY line.
// An error names the node and what it printed instead.
absl::StatusOr<FathomdProcess> StartFathomd(int node_id, const std::vector<std::string>& flags,
                                            absl::Duration ready_timeout = absl::Seconds(60));

// The two halves of StartFathomd, for starting several nodes at once (a whole-cluster restart, where
// every node waits for all the others before it prints READY): start without waiting, then wait.
absl::StatusOr<std::unique_ptr<Subprocess>> LaunchFathomd(int node_id, const std::vector<std::string>& flags);
absl::StatusOr<FathomdProcess> WaitForReady(int node_id, std::unique_ptr<Subprocess> process,
                                            absl::Duration ready_timeout = absl::Seconds(60));

// How a fathomd that is expected to fail at startup ended: its exit code and what it wrote on stderr.
struct FathomdExit {
  int exit_code = -1;  // -1: killed by a signal
  std::string stdout_line;  // its first stdout line, if any
  std::string stderr_text;
};
// Runs fathomd with `flags`, its stderr into `stderr_path`, and waits for it to exit; DeadlineExceeded
// (and SIGKILL) if it is still running after `timeout`, or if it printed READY.
absl::StatusOr<FathomdExit> RunFathomdToExit(int node_id, const std::vector<std::string>& flags,
                                             const std::string& stderr_path,
                                             absl::Duration timeout = absl::Seconds(60));

// A control client for `address` with the cluster token.
absl::StatusOr<std::unique_ptr<control::ControlClient>> ConnectControl(const std::string& address,
                                                                       const std::string& token,
                                                                       absl::Duration call_timeout = absl::Seconds(20));

// The counters of the node serving at `address` (its Stats), or an empty map when it does not answer.
std::map<std::string, uint64_t> CountersOf(const std::string& address, const std::string& token);

}  // namespace fathom::testing

#endif  // FATHOM_TESTS_UTIL_FATHOMD_PROCESS_H_
