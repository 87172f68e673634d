// What a server's own accounting says its data takes, for the report's memory per record: Redis's
// used_memory (INFO memory), memcached's total_malloced (its slab pages), and for Fathom the slabs its
// members carved for objects, times the copies (docs/formats/control.md's memory gauges).
#ifndef FATHOM_BENCH_YCSB_SERVER_MEMORY_H_
#define FATHOM_BENCH_YCSB_SERVER_MEMORY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fathom::ycsb {

// The `name:value` line of a Redis INFO reply ("used_memory:12345\r\n..."). NotFound if absent,
// DataLoss if its value is not a number.
absl::StatusOr<uint64_t> RedisInfoField(absl::string_view info, absl::string_view name);

// A data member's Stats counters (node id and counters; control::StatsResponse's).
struct MemberCounters {
  uint32_t node_id = 0;
  std::map<std::string, uint64_t> counters;
};

// One data member's objects, with the copies its backups hold: memory.carved_bytes * (1 + txn.backups)
// (a backup's copy of a region mirrors its primary byte for byte). FailedPrecondition naming the member
// if it reports neither (a fathomd older than this driver).
absl::StatusOr<uint64_t> MemberObjectBytes(const MemberCounters& member);

// The sum over the data members.
absl::StatusOr<uint64_t> ClusterObjectBytes(const std::vector<MemberCounters>& members);

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_SERVER_MEMORY_H_
