// Replica placement, pure functions: choose f+1 distinct members for a new region (PlaceRegion), or the
// backups of a member's region (ChooseBackups), balancing memory and spreading over failure domains; and
// the configuration's placement as the data plane reads it (RegionMapOf).
//
//   std::vector<MemberLoad> loads = MemberLoads(config);
//   ASSIGN_OR_RETURN(std::vector<uint32_t> replicas, PlaceRegion(loads, 64 << 20, /*replicas=*/3));
//   // replicas[0] is the primary, the rest are backups.
//   node->region_directory().Set(RegionMapOf(config));
#ifndef FATHOM_COORDINATOR_PLACEMENT_H_
#define FATHOM_COORDINATOR_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/configuration.h"
#include "platform/memory/region_map.h"

namespace fathom::coordinator {

struct MemberLoad {
  uint32_t node_id = 0;
  uint64_t capacity_bytes = 0;  // 0: unknown, treated as unlimited
  uint64_t used_bytes = 0;      // bytes of region replicas placed on it
  uint32_t replicas = 0;        // number of region replicas placed on it
  std::string failure_domain;   // MemberInfo::failure_domain, or "node <id>" when it gave none
};

// Every member's load in `config` (each replica of a region counts its full size on its node).
std::vector<MemberLoad> MemberLoads(const Configuration& config);

// `replicas` distinct members for a region of `size_bytes`: the least used first (ties: fewer replicas,
// then lower node id), skipping members whose known capacity cannot hold it. The first is the primary.
// InvalidArgument: size 0 or replicas < 1. FailedPrecondition: fewer members than replicas.
// ResourceExhausted: enough members, but not enough with room.
absl::StatusOr<std::vector<uint32_t>> PlaceRegion(const std::vector<MemberLoad>& loads, uint64_t size_bytes,
                                                  int replicas);

// Up to `count` more backups for a region already held by `holders` (its primary and backups so far, members
// or not): members not among them, those in a failure domain no holder is in first, then the least used
// (bytes, then replicas, then node id). A member's memory_bytes is the memory of its own regions; backup
// copies are held apart (txn/backup_store.h), so this balances them without a capacity check. Fewer than
// `count` if the cluster has too few members.
std::vector<uint32_t> ChooseBackups(const std::vector<MemberLoad>& loads, const std::vector<uint32_t>& holders,
                                    int count);

// The configuration's placement as the data plane reads it: its data members, f, every region's replicas.
memory::RegionMap RegionMapOf(const Configuration& config);

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_PLACEMENT_H_
