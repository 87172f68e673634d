#include "platform/memory/slab_allocator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"

namespace fathom::memory {
namespace {

bool IsSmall(int size_class) { return UsesSmallSlabs(SlotBytes(size_class)); }

}  // namespace

SlabSource::SlabSource(std::vector<LocalRegion*> regions, uint32_t chunk_bytes) : chunk_bytes_(chunk_bytes) {
  for (LocalRegion* region : regions) {
    regions_.push_back({region, std::vector<Unit>(region->size() / chunk_bytes_ * units_per_chunk())});
  }
}

SlabSource::RegionState* SlabSource::StateOf(uint32_t region) {
  return const_cast<RegionState*>(std::as_const(*this).StateOf(region));
}

const SlabSource::RegionState* SlabSource::StateOf(uint32_t region) const {
  for (const RegionState& state : regions_) {
    if (state.region->id() == region) return &state;
  }
  return nullptr;
}

absl::StatusOr<SlabSource::Placement> SlabSource::Place(const RegionState& state, const Slot& slot) const {
  const int size_class = SizeClassFor(slot.capacity);
  const uint64_t offset = slot.address.offset;
  const bool in_region = offset / kSmallSlabBytes < state.units.size() &&
                         offset + slot.capacity <= state.units.size() * uint64_t{kSmallSlabBytes};
  if (in_region && size_class >= 0 && SlotBytes(size_class) == slot.capacity) {
    const uint64_t in_unit = offset % kSmallSlabBytes;
    if (IsSmall(size_class) && in_unit % slot.capacity == 0 && in_unit + slot.capacity <= kSmallSlabBytes) {
      return Placement{offset / kSmallSlabBytes, false};
    }
    if ((offset % chunk_bytes_) % slot.capacity == 0 && offset % chunk_bytes_ + slot.capacity <= chunk_bytes_) {
      return Placement{offset / chunk_bytes_ * units_per_chunk(), true};
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("region ", slot.address.region, ": ", slot.address.ToString(),
                                                 " is not a slot of ", slot.capacity, " bytes in it"));
}

absl::Status SlabSource::ClaimLocked(RegionState& state, const Placement& placement, int size_class,
                                     const Slot& slot) {
  const auto conflict = [&](absl::string_view why) {
    return absl::FailedPreconditionError(
        absl::StrCat("the slab at ", slot.address.ToString(), " (a slot of ", slot.capacity, " bytes) ", why));
  };
  const uint64_t per_chunk = units_per_chunk();
  if (!placement.chunk_wide) {
    Unit& unit = state.units[placement.first_unit];
    if (unit.size_class < 0) {
      unit = Unit{static_cast<int16_t>(size_class), false, true};
      ++carved_units_;
      return absl::OkStatus();
    }
    if (!unit.claimed) return conflict("is already given to an allocator");
    if (unit.size_class != size_class) return conflict(absl::StrCat("holds slots of ", SlotBytes(unit.size_class)));
    // A slot at the start of its unit's slot grid may belong to a chunk-wide slab too (the grids meet).
    if (unit.chunk_wide && (slot.address.offset % chunk_bytes_) % slot.capacity != 0) {
      return conflict("is laid out over its whole chunk");
    }
    return absl::OkStatus();
  }
  // Chunk-wide: every unit of the chunk free, or claimed for this class in a layout that agrees with the
  // chunk's (a small slab whose start lies on the chunk's slot grid).
  for (uint64_t u = placement.first_unit; u < placement.first_unit + per_chunk; ++u) {
    const Unit& unit = state.units[u];
    if (unit.size_class < 0) continue;
    if (!unit.claimed) return conflict("is already given to an allocator");
    if (unit.size_class != size_class) return conflict(absl::StrCat("holds slots of ", SlotBytes(unit.size_class)));
    if (!unit.chunk_wide && (u % per_chunk) * kSmallSlabBytes % slot.capacity != 0) {
      return conflict("holds slots of the same size laid out in small slabs");
    }
  }
  for (uint64_t u = placement.first_unit; u < placement.first_unit + per_chunk; ++u) {
    Unit& unit = state.units[u];
    if (unit.size_class < 0) ++carved_units_;
    unit = Unit{static_cast<int16_t>(size_class), true, true};
  }
  return absl::OkStatus();
}

absl::Status SlabSource::AddRegion(LocalRegion* region, const std::vector<Slot>& used) {
  // Claimed into a scratch state first: a bad slot adds nothing.
  RegionState state{region, std::vector<Unit>(region->size() / chunk_bytes_ * units_per_chunk())};
  MutexLock lock(&mu_);
  const uint64_t carved_before = carved_units_;
  for (const Slot& slot : used) {
    absl::Status status;
    if (slot.address.region != region->id()) {
      status = absl::InvalidArgumentError(absl::StrCat("region ", region->id(), ": ", slot.address.ToString(),
                                                       " is not in it"));
    } else if (absl::StatusOr<Placement> placement = Place(state, slot); !placement.ok()) {
      status = placement.status();
    } else if (status = ClaimLocked(state, *placement, SizeClassFor(slot.capacity), slot); !status.ok()) {
      status = absl::InvalidArgumentError(status.message());
    }
    if (!status.ok()) {
      carved_units_ = carved_before;
      return status;
    }
  }
  regions_.push_back(std::move(state));
  return absl::OkStatus();
}

absl::StatusOr<Slab> SlabSource::TakeSlab(int size_class) {
  if (size_class < 0 || size_class >= kNumSizeClasses) {
    return absl::InvalidArgumentError(absl::StrCat("size class ", size_class));
  }
  const uint64_t per_chunk = units_per_chunk();
  MutexLock lock(&mu_);
  for (RegionState& state : regions_) {
    const uint32_t id = state.region->id();
    if (IsSmall(size_class)) {
      while (state.next_unit < state.units.size() && state.units[state.next_unit].size_class >= 0) ++state.next_unit;
      if (state.next_unit == state.units.size()) continue;
      const uint64_t u = state.next_unit++;
      state.units[u] = Unit{static_cast<int16_t>(size_class), false, false};
      ++carved_units_;
      return Slab{GlobalAddress{id, static_cast<uint32_t>(u * kSmallSlabBytes)}, kSmallSlabBytes, size_class};
    }
    // A chunk none of whose units is carved. Small slabs fill chunks from the front and never leave a
    // hole behind their cursor, so chunks skipped here are (or will be) theirs.
    const uint64_t chunks = state.units.size() / per_chunk;
    for (; state.next_chunk < chunks; ++state.next_chunk) {
      const auto first = state.units.begin() + state.next_chunk * per_chunk;
      if (std::all_of(first, first + per_chunk, [](const Unit& unit) { return unit.size_class < 0; })) break;
    }
    if (state.next_chunk == chunks) continue;
    const uint64_t chunk = state.next_chunk++;
    for (uint64_t u = chunk * per_chunk; u < (chunk + 1) * per_chunk; ++u) {
      state.units[u] = Unit{static_cast<int16_t>(size_class), true, false};
    }
    carved_units_ += per_chunk;
    return Slab{GlobalAddress{id, static_cast<uint32_t>(chunk * chunk_bytes_)}, chunk_bytes_, size_class};
  }
  uint64_t bytes = 0;
  for (const RegionState& state : regions_) bytes += state.region->size();
  const std::string size = bytes % (1 << 20) == 0 ? absl::StrCat(bytes >> 20, " MiB") : absl::StrCat(bytes, " bytes");
  const std::string where = absl::StrCat(size, " of its ", regions_.size(), " region(s)");
  return absl::ResourceExhaustedError(absl::StrCat(
      "no room for a slab of ", SlotBytes(size_class), "-byte slots: ",
      IsSmall(size_class) ? absl::StrCat("all ", where, " are carved into slabs")
                          : absl::StrCat("no whole ", chunk_bytes_ >> 10, " KiB chunk is left uncarved in the ", where)));
}

absl::Status SlabSource::Claim(GlobalAddress address, uint32_t slot_bytes) {
  const Slot slot{address, slot_bytes};
  MutexLock lock(&mu_);
  RegionState* state = StateOf(address.region);
  if (state == nullptr || address.offset >= state->units.size() * uint64_t{kSmallSlabBytes}) {
    return absl::NotFoundError(absl::StrCat("no region holds ", address.ToString()));
  }
  absl::StatusOr<Placement> placement = Place(*state, slot);
  if (!placement.ok()) return placement.status();
  return ClaimLocked(*state, *placement, SizeClassFor(slot_bytes), slot);
}

absl::StatusOr<Slab> SlabSource::SlabOf(GlobalAddress address) const {
  MutexLock lock(&mu_);
  const RegionState* state = StateOf(address.region);
  const uint64_t u = address.offset / kSmallSlabBytes;
  if (state == nullptr || u >= state->units.size() || state->units[u].size_class < 0) {
    return absl::NotFoundError(absl::StrCat("no slab at ", address.ToString()));
  }
  const Unit& unit = state->units[u];
  if (unit.chunk_wide) {
    return Slab{GlobalAddress{address.region, address.offset / chunk_bytes_ * chunk_bytes_}, chunk_bytes_,
                unit.size_class};
  }
  return Slab{GlobalAddress{address.region, static_cast<uint32_t>(u * kSmallSlabBytes)}, kSmallSlabBytes,
              unit.size_class};
}

uint64_t SlabSource::carved_bytes() const {
  MutexLock lock(&mu_);
  return carved_units_ * kSmallSlabBytes;
}

uint64_t SlabSource::region_bytes() const {
  MutexLock lock(&mu_);
  uint64_t bytes = 0;
  for (const RegionState& state : regions_) bytes += state.region->size();
  return bytes;
}

absl::StatusOr<Slot> SlabAllocator::Allocate(uint64_t bytes) {
  const int size_class = SizeClassFor(bytes);
  if (size_class < 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot allocate ", bytes, " bytes (1 to ", kMaxSlotBytes, ")"));
  }
  ClassState& state = classes_[size_class];
  const uint32_t slot_bytes = SlotBytes(size_class);
  if (!state.free_list.empty()) {
    GlobalAddress address = state.free_list.back();
    state.free_list.pop_back();
    ++stats_.allocated;
    stats_.allocated_bytes += slot_bytes;
    return Slot{address, slot_bytes};
  }
  if (state.current.size_class < 0 || state.next_offset + slot_bytes > state.current.bytes) {
    auto slab = source_->TakeSlab(size_class);
    if (absl::IsResourceExhausted(slab.status())) {
      // Memory is carved up: a freed slot of a larger class holds the object too (a slab keeps its class:
      // promotion and restore find slots by their headers, so a slot never changes size).
      for (int larger = size_class + 1; larger < kNumSizeClasses; ++larger) {
        ClassState& other = classes_[larger];
        if (other.free_list.empty()) continue;
        GlobalAddress address = other.free_list.back();
        other.free_list.pop_back();
        ++stats_.allocated;
        ++stats_.larger_slots;
        stats_.allocated_bytes += SlotBytes(larger);
        return Slot{address, SlotBytes(larger)};
      }
    }
    if (!slab.ok()) return slab.status();
    ++stats_.slabs;
    state.current = *slab;
    state.next_offset = 0;
  }
  GlobalAddress address{state.current.base.region, state.current.base.offset + state.next_offset};
  state.next_offset += slot_bytes;
  ++stats_.allocated;
  stats_.allocated_bytes += slot_bytes;
  return Slot{address, slot_bytes};
}

absl::Status SlabAllocator::Claim(GlobalAddress address, uint32_t slot_bytes) {
  const int size_class = SizeClassFor(slot_bytes);
  if (size_class < 0 || SlotBytes(size_class) != slot_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(slot_bytes, " bytes is not a slot size"));
  }
  if (absl::Status claimed = source_->Claim(address, slot_bytes); !claimed.ok()) return claimed;
  stats_.allocated_bytes += slot_bytes;
  return absl::OkStatus();
}

absl::Status SlabAllocator::Free(GlobalAddress address) {
  absl::StatusOr<Slab> slab = source_->SlabOf(address);
  if (!slab.ok()) return absl::InvalidArgumentError(slab.status().message());
  const uint32_t slot_bytes = SlotBytes(slab->size_class);
  if ((address.offset - slab->base.offset) % slot_bytes != 0 ||
      address.offset - slab->base.offset + slot_bytes > slab->bytes) {
    return absl::InvalidArgumentError(absl::StrCat(address.ToString(), " is not the start of a ", slot_bytes,
                                                   "-byte slot"));
  }
  classes_[slab->size_class].free_list.push_back(address);
  ++stats_.freed;
  stats_.freed_bytes += slot_bytes;
  return absl::OkStatus();
}

}  // namespace fathom::memory
