// The configuration change behind Coordinator::AllocateRegion, shared by both coordinators.
//
//   RegionAllocation out;
//   ASSIGN_OR_RETURN(Configuration c, coordinator.Update(AllocateRegionMutation(size, replicas, &out)));
#ifndef FATHOM_COORDINATOR_ALLOCATION_H_
#define FATHOM_COORDINATOR_ALLOCATION_H_

#include <cstdint>

#include "coordinator/coordinator.h"

namespace fathom::coordinator {

// Adds a region (id next_region_id, replicas from PlaceRegion) and fills `*out` (region id and replicas;
// the caller sets the epoch from the committed configuration). `out` must outlive the mutation.
Coordinator::Mutation AllocateRegionMutation(uint64_t size_bytes, int replicas, RegionAllocation* out);

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_ALLOCATION_H_
