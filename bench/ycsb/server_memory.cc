#include "bench/ycsb/server_memory.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fathom::ycsb {

absl::StatusOr<uint64_t> RedisInfoField(absl::string_view info, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(info, '\n')) {
    line = absl::StripSuffix(line, "\r");
    if (!absl::ConsumePrefix(&line, name) || !absl::ConsumePrefix(&line, ":")) continue;
    uint64_t value = 0;
    if (!absl::SimpleAtoi(line, &value)) {
      return absl::DataLossError(absl::StrCat("INFO field ", name, " is not a number: \"", line, "\""));
    }
    return value;
  }
  return absl::NotFoundError(absl::StrCat("no ", name, " in the INFO reply"));
}

absl::StatusOr<ServerMemory> RedisMemory(absl::string_view info) {
  absl::StatusOr<uint64_t> used = RedisInfoField(info, "used_memory");
  if (!used.ok()) return used.status();
  return ServerMemory{*used, static_cast<int64_t>(*used)};
}

absl::StatusOr<ServerMemory> MemberObjectMemory(const MemberCounters& member) {
  const auto& counters = member.counters;
  auto carved = counters.find("memory.carved_bytes");
  auto allocated = counters.find("memory.slot_bytes_allocated");
  auto freed = counters.find("memory.slot_bytes_freed");
  auto backups = counters.find("txn.backups");
  if (carved == counters.end() || allocated == counters.end() || freed == counters.end() ||
      backups == counters.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("node ", member.node_id,
                     " reports no memory.carved_bytes, memory.slot_bytes_allocated, memory.slot_bytes_freed or txn.backups"));
  }
  if (freed->second > allocated->second) {
    return absl::DataLossError(absl::StrCat("node ", member.node_id, " freed ", freed->second,
                                            " slot bytes of the ", allocated->second, " it allocated"));
  }
  const uint64_t copies = 1 + backups->second;
  return ServerMemory{carved->second * copies, static_cast<int64_t>((allocated->second - freed->second) * copies)};
}

absl::StatusOr<ServerMemory> ClusterObjectMemory(const std::vector<MemberCounters>& members) {
  ServerMemory total{0, 0};
  for (const MemberCounters& member : members) {
    absl::StatusOr<ServerMemory> memory = MemberObjectMemory(member);
    if (!memory.ok()) return memory.status();
    total.taken += memory->taken;
    total.allocated += memory->allocated;
  }
  return total;
}

}  // namespace fathom::ycsb
