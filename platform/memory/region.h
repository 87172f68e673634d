// Regions: the unit of memory a node contributes to the global address space. A region is allocated
// and registered with the fabric once (control path); everything after that carves it up without
// touching the fabric.
//
//   ASSIGN_OR_RETURN(auto region, LocalRegion::Allocate(fabric, /*id=*/7, /*owner=*/1, 64 << 20));
//   RegionInfo info = region->info();        // ship to peers (id, owner, size, remote key)
#ifndef FATHOM_PLATFORM_MEMORY_REGION_H_
#define FATHOM_PLATFORM_MEMORY_REGION_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "platform/fabric/fabric.h"
#include "platform/memory/global_address.h"

namespace fathom::memory {

// What peers know about a region.
struct RegionInfo {
  uint32_t id = kNullRegion;
  uint32_t owner_node = 0;
  uint64_t size = 0;
  fabric::RegionDescriptor descriptor;  // with the remote key; descriptor.length == size
};

// A region this node owns: memory registered with the fabric.
class LocalRegion {
 public:
  // InvalidArgument for id 0, size 0, or size over 4 GiB; the fabric's error if it cannot allocate.
  static absl::StatusOr<std::unique_ptr<LocalRegion>> Allocate(fabric::Fabric& fabric, uint32_t id,
                                                               uint32_t owner_node, uint64_t size);

  uint32_t id() const { return info_.id; }
  uint64_t size() const { return info_.size; }
  std::byte* data() const { return fabric_region_->data(); }
  const RegionInfo& info() const { return info_; }
  // The fabric registration, for layers that take one (the msg layer's rings and credit words).
  fabric::Region& fabric_region() const { return *fabric_region_; }
  // The local address of `offset`. REQUIRES: offset < size().
  std::byte* at(uint32_t offset) const { return data() + offset; }

 private:
  LocalRegion(std::unique_ptr<fabric::Region> fabric_region, RegionInfo info)
      : fabric_region_(std::move(fabric_region)), info_(std::move(info)) {}
  std::unique_ptr<fabric::Region> fabric_region_;
  RegionInfo info_;
};

}  // namespace fathom::memory

#endif  // FATHOM_PLATFORM_MEMORY_REGION_H_
