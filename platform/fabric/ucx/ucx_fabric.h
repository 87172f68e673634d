// UcxFabric: the real Fabric, on UCX's ucp API.
//
// One ucp context per process (per UcxFabric), one ucp worker per thread. The transports come from
// UcxOptions::transports (UCX_TLS syntax) or, when empty, from the UCX_TLS environment variable:
//   "sm"   posix/sysv shared memory (+cma) between processes on one host: true one-sided, no target CPU;
//   "tcp"  any network; UCX only emulates one-sided operations there, with the target's CPU, so reads and
//          writes go as batched messages served by the target's progress (UcxOptions::remote_access), which
//          Fathom nodes always run (Worker::Wait sleeps on the worker's event fd, it never stops serving);
//   "rc"/"ud" verbs on RDMA NICs (not available on the CI machines).
//
//   UcxOptions options;
//   options.transports = "sm";
//   ASSIGN_OR_RETURN(std::unique_ptr<Fabric> fabric, CreateUcxFabric(options));
#ifndef FATHOM_PLATFORM_FABRIC_UCX_UCX_FABRIC_H_
#define FATHOM_PLATFORM_FABRIC_UCX_UCX_FABRIC_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "platform/base/clock.h"
#include "platform/fabric/fabric.h"

namespace fathom::fabric {

struct UcxOptions {
  FabricOptions fabric;
  // UCX_TLS syntax ("sm", "tcp", "posix,sysv,cma", "rc,sm"); empty means the UCX_TLS environment variable
  // or UCX's default.
  std::string transports;
  // Used for operation deadlines. Not owned; must outlive the fabric.
  Clock* clock = Clock::Real();
  // How reads and writes reach peer memory this process cannot map (mapped shared memory is always a copy):
  //   kAuto       as messages where the transports are named and include tcp but no RDMA transport (tcp
  //               serves one-sided operations with the target's CPU anyway, one message per operation and a
  //               flush round trip per write), else UCX's one-sided operations;
  //   kMessages   always as messages (batched, served by the target's progress: docs/formats/fabric.md);
  //   kOneSided   always UCX's one-sided get and put.
  // Atomics and reads or writes over 32 KiB always use UCX's own operations.
  enum class RemoteAccess { kAuto, kMessages, kOneSided };
  RemoteAccess remote_access = RemoteAccess::kAuto;
};

// Parses "auto", "messages" or "one_sided" (the --fabric_remote_access flag's values).
absl::StatusOr<UcxOptions::RemoteAccess> ParseRemoteAccess(std::string_view name);

absl::StatusOr<std::unique_ptr<Fabric>> CreateUcxFabric(const UcxOptions& options);

}  // namespace fathom::fabric

#endif  // FATHOM_PLATFORM_FABRIC_UCX_UCX_FABRIC_H_
