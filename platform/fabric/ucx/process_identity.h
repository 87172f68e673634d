// ProcessIdentity: which process on which machine a worker lives in, so that a same-host peer's death
// can be detected without the peer's help. Shared-memory transports have no peer-failure support in UCX
// (its PEER error mode refuses them), and a dead peer's shared memory stays mapped and readable, so the
// fabric checks the peer process itself, as UCX's own shm endpoint check does.
#ifndef FATHOM_PLATFORM_FABRIC_UCX_PROCESS_IDENTITY_H_
#define FATHOM_PLATFORM_FABRIC_UCX_PROCESS_IDENTITY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fathom::fabric::ucx_internal {

struct ProcessIdentity {
  std::string boot_id;      // /proc/sys/kernel/random/boot_id: the machine and its boot
  uint64_t pid_namespace = 0;  // inode of /proc/self/ns/pid: pids are comparable only inside one namespace
  uint32_t pid = 0;
  uint64_t start_ticks = 0;    // field 22 of /proc/<pid>/stat: tells a reused pid apart

  static absl::StatusOr<ProcessIdentity> Self();
  // True if `other` runs on this machine in this pid namespace, so IsAlive can judge it.
  bool SameHostAs(const ProcessIdentity& other) const;
  // For a same-host peer: false once the process has exited (or its pid was reused).
  static bool IsAlive(const ProcessIdentity& peer);

  std::string Serialize() const;  // 64 bytes, see docs/formats/fabric.md
  static absl::StatusOr<ProcessIdentity> Parse(std::string_view bytes);
  static constexpr size_t kSerializedBytes = 64;
};

}  // namespace fathom::fabric::ucx_internal

#endif  // FATHOM_PLATFORM_FABRIC_UCX_PROCESS_IDENTITY_H_
