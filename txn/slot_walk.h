// The slots of a region's memory, in order, found from their object headers (docs/formats/objects.md):
// every slot ever allocated has a header giving its capacity; a slot never used is zero. Used by recovery
// where no allocator state exists for the memory: a new backup's fill (data_recovery.cc), a promoted
// backup's allocator (promotion.cc) and replica digests (replica_digest.cc).
#ifndef FATHOM_TXN_SLOT_WALK_H_
#define FATHOM_TXN_SLOT_WALK_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "platform/memory/region.h"
#include "txn/records.h"

namespace fathom::txn {

// Calls `visit(offset, capacity)` for each slot of `memory` that has a header, in address order; stops
// at the first error and returns it.
absl::Status ForEachSlot(const memory::LocalRegion& memory,
                         absl::FunctionRef<absl::Status(uint32_t offset, uint32_t capacity)> visit);
// The same over the slots that start below `end` (a copy known to hold nothing past it).
absl::Status ForEachSlotBelow(const memory::LocalRegion& memory, uint64_t end,
                              absl::FunctionRef<absl::Status(uint32_t offset, uint32_t capacity)> visit);
// A walk that can stop and resume (a paced copy): from `begin`, which must be 0 or an offset an earlier
// walk returned, over the slots that start below `end`, until `visit` returns false (that slot is not
// visited). Returns where the next walk starts: the stopped slot, or a value >= `end` once it got there.
absl::StatusOr<uint64_t> WalkSlotsFrom(const memory::LocalRegion& memory, uint64_t begin, uint64_t end,
                                       absl::FunctionRef<absl::StatusOr<bool>(uint32_t offset, uint32_t capacity)> visit);

// A consistent copy of the slot at `offset` (a torn or locked copy is taken again), as the entry that
// installs its state: a live object's payload and version, or a freed slot's free; nullopt for a slot
// never used. Unavailable if it stayed locked or torn; `buffer` is scratch space.
absl::StatusOr<std::optional<WriteEntry>> CopySlot(const memory::LocalRegion& memory, uint32_t offset,
                                                   uint32_t capacity, std::vector<std::byte>& buffer);

}  // namespace fathom::txn

#endif  // FATHOM_TXN_SLOT_WALK_H_
