#include "txn/slot_walk.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "platform/memory/global_address.h"
#include "platform/object/local_object.h"
#include "platform/object/object_codec.h"
#include "platform/object/object_layout.h"

namespace fathom::txn {
namespace {

// How many times a locked or torn object is copied again before CopySlot gives up.
constexpr int kCopyAttempts = 2000;

}  // namespace

absl::StatusOr<std::optional<WriteEntry>> CopySlot(const memory::LocalRegion& memory, uint32_t offset,
                                                   uint32_t capacity, std::vector<std::byte>& buffer) {
  buffer.resize(capacity);
  object::LocalObject slot(memory.at(offset), capacity);
  for (int attempt = 0; attempt < kCopyAttempts; ++attempt) {
    slot.CopyTo(buffer);
    const object::ObjectHeader header = object::DecodeHeader(buffer);
    const object::ObjectRef ref{memory::GlobalAddress{memory.id(), offset}, header.incarnation, capacity};
    const object::ObjectCheck check = object::CheckObjectCopy(buffer, ref);
    if (object::IsRetryable(check.verdict)) {
      if (attempt > 16) absl::SleepFor(absl::Microseconds(50));  // a commit holds it: let it finish
      continue;
    }
    if (check.verdict != object::Verdict::kValid && check.verdict != object::Verdict::kStale) {
      return absl::InternalError(absl::StrCat("slot ", ref.address.ToString(), " of ", capacity,
                                              " bytes holds an object of ", check.header.capacity));
    }
    WriteEntry entry;
    entry.version = header.version_word & object::kVersionMask;
    if (check.verdict == object::Verdict::kValid) {
      entry.ref = ref;
      entry.op = WriteOp::kWrite;
      entry.payload.assign(reinterpret_cast<const char*>(check.payload.data()), check.payload.size());
      return std::optional<WriteEntry>(std::move(entry));
    }
    // A freed slot: the state a free installs (the next incarnation, not live).
    if (header.incarnation == 0 || header.live()) return std::optional<WriteEntry>();
    entry.ref = object::ObjectRef{ref.address, header.incarnation - 1, capacity};
    entry.op = WriteOp::kFree;
    return std::optional<WriteEntry>(std::move(entry));
  }
  return absl::UnavailableError(absl::StrCat("object at ", memory.id(), "+", offset, " stayed locked or torn"));
}


absl::Status ForEachSlot(const memory::LocalRegion& memory,
                         absl::FunctionRef<absl::Status(uint32_t offset, uint32_t capacity)> visit) {
  return ForEachSlotBelow(memory, memory.size(), visit);
}

absl::Status ForEachSlotBelow(const memory::LocalRegion& memory, uint64_t end,
                              absl::FunctionRef<absl::Status(uint32_t offset, uint32_t capacity)> visit) {
  return WalkSlotsFrom(memory, 0, end,
                       [&](uint32_t offset, uint32_t capacity) -> absl::StatusOr<bool> {
                         if (absl::Status s = visit(offset, capacity); !s.ok()) return s;
                         return true;
                       })
      .status();
}

absl::StatusOr<uint64_t> WalkSlotsFrom(const memory::LocalRegion& memory, uint64_t begin, uint64_t end,
                                       absl::FunctionRef<absl::StatusOr<bool>(uint32_t offset, uint32_t capacity)> visit) {
  end = std::min<uint64_t>(end, memory.size());
  uint64_t offset = begin;
  while (offset + object::kHeaderBytes <= end) {
    const uint32_t capacity = object::LocalObject(memory.at(static_cast<uint32_t>(offset)), 64).ReadHeader().capacity;
    if (capacity < 64 || capacity % 64 != 0 || offset + capacity > memory.size()) {
      offset += 64;  // never used (zero), or not a slot start
      continue;
    }
    absl::StatusOr<bool> go_on = visit(static_cast<uint32_t>(offset), capacity);
    if (!go_on.ok()) return go_on.status();
    if (!*go_on) return offset;
    offset += capacity;
  }
  return std::max(offset, end);
}

}  // namespace fathom::txn
