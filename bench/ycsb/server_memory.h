// What a server's own accounting says its data takes, for the report's memory per record, counted two
// ways. Taken: memory the allocator holds for the data (memcached's total_malloced, its slab pages;
// Fathom's slabs carved for objects; Redis's used_memory, see RedisMemory). Allocated: the sizes of the
// live allocations, size-class rounding included, partly used pages not (Redis's used_memory; Fathom's
// slots of live objects; memcached reports no such figure). Fathom's count every copy (docs/formats/
// control.md's memory gauges).
#ifndef FATHOM_BENCH_YCSB_SERVER_MEMORY_H_
#define FATHOM_BENCH_YCSB_SERVER_MEMORY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fathom::ycsb {

struct ServerMemory {
  uint64_t taken = 0;
  int64_t allocated = -1;  // -1: not reported
};

// The `name:value` line of a Redis INFO reply ("used_memory:12345\r\n..."). NotFound if absent,
// DataLoss if its value is not a number.
absl::StatusOr<uint64_t> RedisInfoField(absl::string_view info, absl::string_view name);

// A data member's Stats counters (node id and counters; control::StatsResponse's).
struct MemberCounters {
  uint32_t node_id = 0;
  std::map<std::string, uint64_t> counters;
};

// Redis's INFO memory reply: used_memory, as taken and as allocated. Its allocator's pages in use
// (allocator_active) would be the taken figure, but Redis refreshes it only every server tick, so right
// after a load it can read below used_memory; it stays within 1% of used_memory for YCSB's records.
absl::StatusOr<ServerMemory> RedisMemory(absl::string_view info);

// One data member's objects, with the copies its backups hold (a backup's copy of a region mirrors its
// primary byte for byte): taken memory.carved_bytes * (1 + txn.backups), allocated
// (memory.slot_bytes_allocated - memory.slot_bytes_freed) * (1 + txn.backups). FailedPrecondition naming
// the member if it reports them not (a fathomd older than this driver), DataLoss if it freed more than
// it allocated.
absl::StatusOr<ServerMemory> MemberObjectMemory(const MemberCounters& member);

// The sum over the data members.
absl::StatusOr<ServerMemory> ClusterObjectMemory(const std::vector<MemberCounters>& members);

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_SERVER_MEMORY_H_
