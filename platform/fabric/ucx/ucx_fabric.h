// UcxFabric: the real Fabric, on UCX's ucp API.
//
// One ucp context per process (per UcxFabric), one ucp worker per thread. The transports come from
// UcxOptions::transports (UCX_TLS syntax) or, when empty, from the UCX_TLS environment variable:
//   "sm"   posix/sysv shared memory (+cma) between processes on one host: true one-sided, no target CPU;
//   "tcp"  any network; one-sided operations are emulated and served by the target's progress, which
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
};

absl::StatusOr<std::unique_ptr<Fabric>> CreateUcxFabric(const UcxOptions& options);

}  // namespace fathom::fabric

#endif  // FATHOM_PLATFORM_FABRIC_UCX_UCX_FABRIC_H_
