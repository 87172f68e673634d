// Starting a fathomd process in a test and waiting until it serves: it prints
// "READY node=<id> control=<host:port>" on stdout (platform/node/fathomd.cc) once it has joined.
//
//   ASSIGN_OR_RETURN(FathomdProcess node, StartFathomd(1, {"--token=...", "--transports=sm"}));
//   ASSIGN_OR_RETURN(auto client, ConnectControl(node.control_address, token));
#ifndef FATHOM_TESTS_UTIL_FATHOMD_PROCESS_H_
#define FATHOM_TESTS_UTIL_FATHOMD_PROCESS_H_

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

// A control client for `address` with the cluster token.
absl::StatusOr<std::unique_ptr<control::ControlClient>> ConnectControl(const std::string& address,
                                                                       const std::string& token,
                                                                       absl::Duration call_timeout = absl::Seconds(20));

}  // namespace fathom::testing

#endif  // FATHOM_TESTS_UTIL_FATHOMD_PROCESS_H_
