#include "txn/slot_walk.h"

#include "platform/object/local_object.h"
#include "platform/object/object_layout.h"

namespace fathom::txn {

absl::Status ForEachSlot(const memory::LocalRegion& memory,
                         absl::FunctionRef<absl::Status(uint32_t offset, uint32_t capacity)> visit) {
  uint64_t offset = 0;
  while (offset + object::kHeaderBytes <= memory.size()) {
    const uint32_t capacity = object::LocalObject(memory.at(static_cast<uint32_t>(offset)), 64).ReadHeader().capacity;
    if (capacity < 64 || capacity % 64 != 0 || offset + capacity > memory.size()) {
      offset += 64;  // never used (zero), or not a slot start
      continue;
    }
    if (absl::Status s = visit(static_cast<uint32_t>(offset), capacity); !s.ok()) return s;
    offset += capacity;
  }
  return absl::OkStatus();
}

}  // namespace fathom::txn
