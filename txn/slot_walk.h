// The slots of a region's memory, in order, found from their object headers (docs/formats/objects.md):
// every slot ever allocated has a header giving its capacity; a slot never used is zero. Used by recovery
// where no allocator state exists for the memory: a new backup's fill (data_recovery.cc) and a promoted
// backup's allocator (promotion.cc).
#ifndef FATHOM_TXN_SLOT_WALK_H_
#define FATHOM_TXN_SLOT_WALK_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "platform/memory/region.h"

namespace fathom::txn {

// Calls `visit(offset, capacity)` for each slot of `memory` that has a header, in address order; stops
// at the first error and returns it.
absl::Status ForEachSlot(const memory::LocalRegion& memory,
                         absl::FunctionRef<absl::Status(uint32_t offset, uint32_t capacity)> visit);

}  // namespace fathom::txn

#endif  // FATHOM_TXN_SLOT_WALK_H_
