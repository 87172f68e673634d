#include "platform/memory/slab_allocator.h"

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"

namespace fathom::memory {
namespace {
uint64_t SlabKey(uint32_t region, uint64_t slab_index) { return uint64_t{region} << 32 | slab_index; }
}  // namespace

SlabSource::SlabSource(std::vector<LocalRegion*> regions, uint32_t slab_bytes) : slab_bytes_(slab_bytes) {
  for (LocalRegion* region : regions) regions_.push_back({region, 0});
}

absl::Status SlabSource::AddRegion(LocalRegion* region, const std::vector<Slot>& used) {
  absl::flat_hash_map<uint64_t, int> classes;
  for (const Slot& slot : used) {
    const int size_class = SizeClassFor(slot.capacity);
    if (slot.address.region != region->id() || uint64_t{slot.address.offset} + slot.capacity > region->size() ||
        size_class < 0 || SlotBytes(size_class) != slot.capacity ||
        (slot.address.offset % slab_bytes_) % slot.capacity != 0) {
      return absl::InvalidArgumentError(absl::StrCat("region ", region->id(), ": ", slot.address.ToString(),
                                                     " is not a slot of ", slot.capacity, " bytes in it"));
    }
    auto [it, added] = classes.try_emplace(SlabKey(region->id(), slot.address.offset / slab_bytes_), size_class);
    if (it->second != size_class) {
      return absl::InvalidArgumentError(absl::StrCat("region ", region->id(), ": the slab at ", slot.address.ToString(),
                                                     " holds slots of ", SlotBytes(it->second), " and ", slot.capacity,
                                                     " bytes"));
    }
  }
  MutexLock lock(&mu_);
  for (const auto& [key, size_class] : classes) {
    slab_classes_[key] = size_class;
    claimed_.insert(key);
  }
  regions_.push_back({region, 0});
  return absl::OkStatus();
}

absl::StatusOr<Slab> SlabSource::TakeSlab(int size_class) {
  if (size_class < 0 || size_class >= kNumSizeClasses) {
    return absl::InvalidArgumentError(absl::StrCat("size class ", size_class));
  }
  MutexLock lock(&mu_);
  for (RegionCursor& cursor : regions_) {
    const uint64_t slabs = cursor.region->size() / slab_bytes_;
    while (cursor.next_slab < slabs && claimed_.contains(SlabKey(cursor.region->id(), cursor.next_slab))) {
      ++cursor.next_slab;
    }
    if (cursor.next_slab >= slabs) continue;
    const uint64_t index = cursor.next_slab++;
    slab_classes_[SlabKey(cursor.region->id(), index)] = size_class;
    return Slab{GlobalAddress{cursor.region->id(), static_cast<uint32_t>(index * slab_bytes_)}, slab_bytes_,
                size_class};
  }
  uint64_t bytes = 0;
  for (const RegionCursor& cursor : regions_) bytes += cursor.region->size();
  const std::string size = bytes % (1 << 20) == 0 ? absl::StrCat(bytes >> 20, " MiB") : absl::StrCat(bytes, " bytes");
  return absl::ResourceExhaustedError(
      absl::StrCat("no free slab left: all ", size, " of its ", regions_.size(), " region(s) are carved into slabs"));
}

absl::Status SlabSource::Claim(GlobalAddress address, int size_class) {
  if (size_class < 0 || size_class >= kNumSizeClasses) {
    return absl::InvalidArgumentError(absl::StrCat("size class ", size_class));
  }
  MutexLock lock(&mu_);
  for (const RegionCursor& cursor : regions_) {
    if (cursor.region->id() != address.region) continue;
    if (address.offset >= cursor.region->size()) break;
    const uint64_t index = address.offset / slab_bytes_;
    const uint64_t key = SlabKey(address.region, index);
    auto it = slab_classes_.find(key);
    if (it != slab_classes_.end()) {
      if (!claimed_.contains(key)) {
        return absl::FailedPreconditionError(absl::StrCat("the slab at ", address.ToString(),
                                                          " is already given to an allocator"));
      }
      if (it->second != size_class) {
        return absl::FailedPreconditionError(absl::StrCat("the slab at ", address.ToString(), " holds class ",
                                                          it->second, ", not ", size_class));
      }
      return absl::OkStatus();
    }
    slab_classes_[key] = size_class;
    claimed_.insert(key);
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("no region holds ", address.ToString()));
}

absl::StatusOr<int> SlabSource::SizeClassOf(GlobalAddress address) const {
  MutexLock lock(&mu_);
  auto it = slab_classes_.find(SlabKey(address.region, address.offset / slab_bytes_));
  if (it == slab_classes_.end()) return absl::NotFoundError(absl::StrCat("no slab at ", address.ToString()));
  return it->second;
}

uint64_t SlabSource::slabs_taken() const {
  MutexLock lock(&mu_);
  return slab_classes_.size();
}

uint64_t SlabSource::region_bytes() const {
  MutexLock lock(&mu_);
  uint64_t bytes = 0;
  for (const RegionCursor& cursor : regions_) bytes += cursor.region->size();
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
  if ((address.offset % source_->slab_bytes()) % slot_bytes != 0) {
    return absl::InvalidArgumentError(absl::StrCat(address.ToString(), " is not the start of a ", slot_bytes,
                                                   "-byte slot"));
  }
  if (absl::Status claimed = source_->Claim(address, size_class); !claimed.ok()) return claimed;
  stats_.allocated_bytes += slot_bytes;
  return absl::OkStatus();
}

absl::Status SlabAllocator::Free(GlobalAddress address) {
  auto size_class = source_->SizeClassOf(address);
  if (!size_class.ok()) return absl::InvalidArgumentError(size_class.status().message());
  const uint32_t slot_bytes = SlotBytes(*size_class);
  if ((address.offset % source_->slab_bytes()) % slot_bytes != 0) {
    return absl::InvalidArgumentError(absl::StrCat(address.ToString(), " is not the start of a ", slot_bytes,
                                                   "-byte slot"));
  }
  classes_[*size_class].free_list.push_back(address);
  ++stats_.freed;
  stats_.freed_bytes += slot_bytes;
  return absl::OkStatus();
}

}  // namespace fathom::memory
