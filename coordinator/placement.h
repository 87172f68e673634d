// Replica placement, a pure function: choose f+1 distinct members for a new region, balancing memory.
//
//   std::vector<MemberLoad> loads = MemberLoads(config);
//   ASSIGN_OR_RETURN(std::vector<uint32_t> replicas, PlaceRegion(loads, 64 << 20, /*replicas=*/3));
//   // replicas[0] is the primary, the rest are backups.
#ifndef FATHOM_COORDINATOR_PLACEMENT_H_
#define FATHOM_COORDINATOR_PLACEMENT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/configuration.h"

namespace fathom::coordinator {

struct MemberLoad {
  uint32_t node_id = 0;
  uint64_t capacity_bytes = 0;  // 0: unknown, treated as unlimited
  uint64_t used_bytes = 0;      // bytes of region replicas placed on it
  uint32_t replicas = 0;        // number of region replicas placed on it
};

// Every member's load in `config` (each replica of a region counts its full size on its node).
std::vector<MemberLoad> MemberLoads(const Configuration& config);

// `replicas` distinct members for a region of `size_bytes`: the least used first (ties: fewer replicas,
// then lower node id), skipping members whose known capacity cannot hold it. The first is the primary.
// InvalidArgument: size 0 or replicas < 1. FailedPrecondition: fewer members than replicas.
// ResourceExhausted: enough members, but not enough with room.
absl::StatusOr<std::vector<uint32_t>> PlaceRegion(const std::vector<MemberLoad>& loads, uint64_t size_bytes,
                                                  int replicas);

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_PLACEMENT_H_
