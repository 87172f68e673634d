#include "coordinator/allocation.h"

#include "absl/strings/str_cat.h"
#include "coordinator/placement.h"

namespace fathom::coordinator {
namespace {

constexpr uint32_t kFirstNodeRegionId = uint32_t{1} << 16;

}  // namespace

Coordinator::Mutation AllocateRegionMutation(uint64_t size_bytes, int replicas, RegionAllocation* out) {
  return [size_bytes, replicas, out](Configuration& config) -> absl::Status {
    absl::StatusOr<std::vector<uint32_t>> placed = PlaceRegion(MemberLoads(config), size_bytes, replicas);
    if (!placed.ok()) return placed.status();
    const uint32_t id = config.next_region_id() == 0 ? 1 : config.next_region_id();
    // Ids from 2^16 are members' own regions (NodeRegionId): the two kinds must never meet.
    if (id >= kFirstNodeRegionId) {
      return absl::ResourceExhaustedError(absl::StrCat("region ids 1..", kFirstNodeRegionId - 1,
                                                       " are used up (ids from ", kFirstNodeRegionId,
                                                       " are members' own regions)"));
    }
    config.set_next_region_id(id + 1);
    RegionPlacement* r = config.add_regions();
    r->set_region_id(id);
    r->set_size_bytes(size_bytes);
    r->set_primary((*placed)[0]);
    for (size_t i = 1; i < placed->size(); ++i) r->add_backups((*placed)[i]);
    out->region_id = id;
    out->replicas = *placed;
    return absl::OkStatus();
  };
}

}  // namespace fathom::coordinator
