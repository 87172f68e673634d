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

absl::StatusOr<uint64_t> MemberObjectBytes(const MemberCounters& member) {
  const auto& counters = member.counters;
  auto carved = counters.find("memory.carved_bytes");
  auto backups = counters.find("txn.backups");
  if (carved == counters.end() || backups == counters.end()) {
    return absl::FailedPreconditionError(absl::StrCat("node ", member.node_id,
                                                      " reports no memory.carved_bytes or txn.backups"));
  }
  return carved->second * (1 + backups->second);
}

absl::StatusOr<uint64_t> ClusterObjectBytes(const std::vector<MemberCounters>& members) {
  uint64_t total = 0;
  for (const MemberCounters& member : members) {
    absl::StatusOr<uint64_t> bytes = MemberObjectBytes(member);
    if (!bytes.ok()) return bytes.status();
    total += *bytes;
  }
  return total;
}

}  // namespace fathom::ycsb
