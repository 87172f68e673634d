#include "platform/memory/region.h"

#include "absl/strings/str_cat.h"

namespace fathom::memory {

absl::StatusOr<std::unique_ptr<LocalRegion>> LocalRegion::Allocate(fabric::Fabric& fabric, uint32_t id,
                                                                   uint32_t owner_node, uint64_t size) {
  if (id == kNullRegion) return absl::InvalidArgumentError("region id 0 is reserved for null");
  if (size == 0 || size > kMaxRegionBytes) {
    return absl::InvalidArgumentError(absl::StrCat("region size ", size, " is not in [1, 4 GiB]"));
  }
  auto fabric_region = fabric.AllocateRegion(size);
  if (!fabric_region.ok()) return fabric_region.status();
  RegionInfo info{id, owner_node, size, (*fabric_region)->descriptor()};
  return std::unique_ptr<LocalRegion>(new LocalRegion(std::move(*fabric_region), std::move(info)));
}

}  // namespace fathom::memory
