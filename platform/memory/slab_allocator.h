// Slab allocation of slots inside a node's registered regions. Nothing here touches the fabric: regions
// were registered once when they were created, so allocating never registers memory.
//
// SlabSource (one per node, thread-safe) carves slabs out of the node's regions and remembers each slab's
// size class. SlabAllocator (one per thread, not thread-safe) serves slots from its own slabs and free
// lists, so the common path takes no lock.
//
// A region is cut into chunks (1 MiB, the largest slot). Most classes up to 16 KiB take small slabs of
// kSmallSlabBytes (64 KiB), 16 to a chunk (UsesSmallSlabs); the others take a whole chunk. Slots lie from their
// slab's start, each at a multiple of its size. Why small slabs: every thread holds one partly used slab
// per class it allocates, which with 1 MiB slabs was ~10 MB of a 3-node cluster holding 100K records
// (~8% of its memory). Slots that a build before small slabs laid out over a whole chunk (restored from
// the SSD log or found in a promoted copy) make that chunk one slab of their class again (Claim, AddRegion).
//
//   SlabSource source({region.get()});
//   SlabAllocator allocator(&source);                       // per thread
//   ASSIGN_OR_RETURN(Slot slot, allocator.Allocate(200));   // a 256-byte slot
//   RETURN_IF_ERROR(allocator.Free(slot.address));
#ifndef FATHOM_PLATFORM_MEMORY_SLAB_ALLOCATOR_H_
#define FATHOM_PLATFORM_MEMORY_SLAB_ALLOCATOR_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
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

inline constexpr uint32_t kSmallSlabBytes = 64u << 10;

// Whether slots of `slot_bytes` (a class's size) lie in small slabs: when one holds at least 4 of them and
// leaves at most 1/16 of itself unused (an 11 KiB class would leave 8 KiB: it takes whole chunks).
constexpr bool UsesSmallSlabs(uint32_t slot_bytes) {
  return slot_bytes <= kSmallSlabBytes / 4 && kSmallSlabBytes % slot_bytes <= kSmallSlabBytes / 16;
}

class SlabSource {
 public:
  // `chunk_bytes`: a power of two, at least kMaxSlotBytes so every class fits. Regions are cut into
  // chunks of it (a region's tail shorter than a chunk is never carved).
  SlabSource(std::vector<LocalRegion*> regions, uint32_t chunk_bytes = kMaxSlotBytes);

  // A fresh slab for `size_class`; ResourceExhausted when every region is carved up.
  absl::StatusOr<Slab> TakeSlab(int size_class);
  // The slab holding `address` (its start, size and class); NotFound if no slab was carved there.
  absl::StatusOr<Slab> SlabOf(GlobalAddress address) const;
  // Adds `region` whose slots `used` hold objects already (a promoted copy of another node's region):
  // their slabs are claimed (Claim) and the rest of the region is carved as usual, in one step so no
  // allocator can carve a used slab first. InvalidArgument (and nothing added) if a used slot lies outside
  // the region, is not a slot of its size, or shares a slab with a slot of another size.
  absl::Status AddRegion(LocalRegion* region, const std::vector<Slot>& used = {});
  // Marks the slab holding the `slot_bytes` slot at `address` as carved for its class without handing it
  // to any allocator, so its slots are never allocated again (a restart rebuilt objects there from the SSD
  // log) and can be freed. Idempotent. NotFound if no region holds it; InvalidArgument if it is not the
  // start of a slot of that size; FailedPrecondition if its slab was carved for another class or layout,
  // or already given to an allocator.
  absl::Status Claim(GlobalAddress address, uint32_t slot_bytes);
  // Memory in use, as an operator sees it: slabs carved for slots (a slab is never given back, so this
  // counts freed slots too), and all the regions' bytes.
  uint64_t carved_bytes() const;
  uint64_t region_bytes() const;

 private:
  // One small slab's worth of a region: free, a small slab, or a sixteenth of a chunk-wide slab.
  struct Unit {
    int16_t size_class = -1;  // -1: not carved
    bool chunk_wide = false;  // part of a slab that spans its whole chunk
    bool claimed = false;     // carved by Claim/AddRegion, not given to an allocator
  };
  struct RegionState {
    LocalRegion* region;
    std::vector<Unit> units;  // one per kSmallSlabBytes of the region's whole chunks
    uint64_t next_unit = 0;   // small slabs are carved from here on (units before it are all carved)
    uint64_t next_chunk = 0;  // chunk-wide slabs from here on
  };
  // Where `slot` would lie in the layout its class uses, or, for a small class, in the chunk-wide layout
  // of builds before small slabs; InvalidArgument if in neither.
  struct Placement {
    uint64_t first_unit = 0;
    bool chunk_wide = false;
  };
  absl::StatusOr<Placement> Place(const RegionState& state, const Slot& slot) const;
  // Marks `placement` claimed for `size_class`, or checks it already is; FailedPrecondition on a conflict.
  absl::Status ClaimLocked(RegionState& state, const Placement& placement, int size_class, const Slot& slot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  RegionState* StateOf(uint32_t region) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const RegionState* StateOf(uint32_t region) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  uint32_t units_per_chunk() const { return chunk_bytes_ / kSmallSlabBytes; }

  const uint32_t chunk_bytes_;
  mutable absl::Mutex mu_;
  std::vector<RegionState> regions_ ABSL_GUARDED_BY(mu_);
  uint64_t carved_units_ ABSL_GUARDED_BY(mu_) = 0;
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
