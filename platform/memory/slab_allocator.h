// Slab allocation of slots inside a node's registered regions. Nothing here touches the fabric: regions
// were registered once when they were created, so allocating never registers memory.
//
// SlabSource (one per node, thread-safe) carves fixed-size slabs out of the node's regions and remembers
// each slab's size class. SlabAllocator (one per thread, not thread-safe) serves slots from its own slabs
// and free lists, so the common path takes no lock.
//
//   SlabSource source({region.get()}, /*slab_bytes=*/1 << 20);
//   SlabAllocator allocator(&source);                       // per thread
//   ASSIGN_OR_RETURN(Slot slot, allocator.Allocate(200));   // a 256-byte slot
//   RETURN_IF_ERROR(allocator.Free(slot.address));
#ifndef FATHOM_PLATFORM_MEMORY_SLAB_ALLOCATOR_H_
#define FATHOM_PLATFORM_MEMORY_SLAB_ALLOCATOR_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "platform/memory/global_address.h"
#include "platform/memory/region.h"
#include "platform/memory/size_classes.h"

namespace fathom::memory {

struct Slot {
  GlobalAddress address;
  uint32_t capacity = 0;  // bytes, the size class's slot size
};

struct Slab {
  GlobalAddress base;
  uint32_t bytes = 0;
  int size_class = -1;
};

class SlabSource {
 public:
  // `slab_bytes`: a power of two, at least kMaxSlotBytes so every class fits.
  SlabSource(std::vector<LocalRegion*> regions, uint32_t slab_bytes = kMaxSlotBytes);

  // A fresh slab for `size_class`; ResourceExhausted when every region is carved up.
  absl::StatusOr<Slab> TakeSlab(int size_class);
  // The size class of the slab holding `address`; NotFound if no slab was carved there.
  absl::StatusOr<int> SizeClassOf(GlobalAddress address) const;
  // Adds `region` whose slots `used` hold objects already (a promoted copy of another node's region):
  // their slabs are claimed (Claim) and the rest of the region is carved as usual, in one step so no
  // allocator can carve a used slab first. InvalidArgument (and nothing added) if a used slot lies outside
  // the region, is not a slot of its size, or shares a slab with a slot of another size.
  absl::Status AddRegion(LocalRegion* region, const std::vector<Slot>& used = {});
  // Marks the slab holding `address` as carved for `size_class` without handing it to any allocator, so
  // its slots are never allocated again (a restart rebuilt objects there from the SSD log) and can be
  // freed. Idempotent for the same class. NotFound if no region holds it; FailedPrecondition if the slab
  // was carved for another class or already given to an allocator.
  absl::Status Claim(GlobalAddress address, int size_class);
  uint32_t slab_bytes() const { return slab_bytes_; }
  uint64_t slabs_taken() const;
  // Memory in use, as an operator sees it: slabs carved for slots (a slab is never given back, so this
  // counts freed slots too), and all the regions' bytes.
  uint64_t carved_bytes() const { return slabs_taken() * slab_bytes_; }
  uint64_t region_bytes() const;

 private:
  struct RegionCursor {
    LocalRegion* region;
    uint64_t next_slab = 0;  // index of the next slab to carve
  };
  const uint32_t slab_bytes_;
  mutable absl::Mutex mu_;
  std::vector<RegionCursor> regions_ ABSL_GUARDED_BY(mu_);
  // (region id, slab index) -> size class.
  absl::flat_hash_map<uint64_t, int> slab_classes_ ABSL_GUARDED_BY(mu_);
  // Slabs carved by Claim (TakeSlab skips them).
  absl::flat_hash_set<uint64_t> claimed_ ABSL_GUARDED_BY(mu_);
};

class SlabAllocator {
 public:
  explicit SlabAllocator(SlabSource* source) : source_(source) {}

  // InvalidArgument for 0 bytes or more than kMaxSlotBytes; ResourceExhausted when memory is full. When
  // no slab is left for the size, a freed slot of a larger class is used (Slot::capacity says which): a
  // dropped table's memory then serves smaller objects too, never larger ones.
  absl::StatusOr<Slot> Allocate(uint64_t bytes);
  // InvalidArgument if `address` is not the start of a slot in a carved slab. The caller guarantees the
  // slot is allocated (the object layer checks this with the slot's header).
  absl::Status Free(GlobalAddress address);
  // Keeps the `slot_bytes` slot at `address` (rebuilt from the SSD log) from ever being allocated: claims
  // its slab (SlabSource::Claim). InvalidArgument if it is not the start of a slot of that size. The slot
  // stays allocated; Free it to reuse it. Other slots of a claimed slab are not handed out.
  absl::Status Claim(GlobalAddress address, uint32_t slot_bytes);

  struct Stats {
    uint64_t allocated = 0, freed = 0, slabs = 0;
    // Slot bytes (the size class's, not the request's) handed out, claimed and freed; a slot freed on
    // another thread than the one that allocated it counts there, so only sums over threads mean bytes in use.
    uint64_t allocated_bytes = 0, freed_bytes = 0;
    uint64_t larger_slots = 0;  // allocations served by a freed slot of a larger class (memory was full)
  };
  const Stats& stats() const { return stats_; }

 private:
  struct ClassState {
    std::vector<GlobalAddress> free_list;
    Slab current;              // the slab being bump-allocated
    uint32_t next_offset = 0;  // within `current`
  };
  SlabSource* source_;
  std::array<ClassState, kNumSizeClasses> classes_;
  Stats stats_;
};

}  // namespace fathom::memory

#endif  // FATHOM_PLATFORM_MEMORY_SLAB_ALLOCATOR_H_
