#include "platform/fabric/ucx/process_identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "platform/fabric/wire.h"

namespace fathom::fabric::ucx_internal {
namespace {

constexpr size_t kBootIdBytes = 36;  // a UUID in text form

// Field 22 (starttime) of /proc/<pid>/stat; 0 if the process does not exist.
uint64_t StartTicks(uint32_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(in, line)) return 0;
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return 0;
  }
  return std::strtoull(field.c_str(), nullptr, 10);
}

}  // namespace

absl::StatusOr<ProcessIdentity> ProcessIdentity::Self() {
  ProcessIdentity id;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  if (!std::getline(boot, id.boot_id) || id.boot_id.size() != kBootIdBytes) {
    return absl::FailedPreconditionError("cannot read /proc/sys/kernel/random/boot_id");
  }
  struct stat ns;
  if (stat("/proc/self/ns/pid", &ns) != 0) return absl::FailedPreconditionError("cannot stat /proc/self/ns/pid");
  id.pid_namespace = ns.st_ino;
  id.pid = static_cast<uint32_t>(getpid());
  id.start_ticks = StartTicks(id.pid);
  if (id.start_ticks == 0) return absl::FailedPreconditionError("cannot read /proc/self/stat");
  return id;
}

bool ProcessIdentity::SameHostAs(const ProcessIdentity& other) const {
  return boot_id == other.boot_id && pid_namespace == other.pid_namespace;
}

bool ProcessIdentity::IsAlive(const ProcessIdentity& peer) {
  return StartTicks(peer.pid) == peer.start_ticks;
}

std::string ProcessIdentity::Serialize() const {
  std::string out = boot_id;
  out.resize(kBootIdBytes, '\0');
  out.append(4, '\0');  // reserved
  AppendU64(out, pid_namespace);
  AppendU32(out, pid);
  AppendU64(out, start_ticks);
  out.append(kSerializedBytes - out.size(), '\0');  // reserved: 60 bytes used of 64
  return out;
}

absl::StatusOr<ProcessIdentity> ProcessIdentity::Parse(std::string_view bytes) {
  if (bytes.size() != kSerializedBytes) {
    return absl::InvalidArgumentError(absl::StrCat("process identity: ", bytes.size(), " bytes, expected 64"));
  }
  ProcessIdentity id;
  id.boot_id.assign(bytes.data(), kBootIdBytes);
  id.pid_namespace = LoadU64(bytes.data() + 40);
  id.pid = LoadU32(bytes.data() + 48);
  id.start_ticks = LoadU64(bytes.data() + 52);
  return id;
}

}  // namespace fathom::fabric::ucx_internal
