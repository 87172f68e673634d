#include "platform/object/object_store.h"

#include "absl/strings/str_cat.h"
#include "platform/object/object_codec.h"

namespace fathom::object {

ObjectStore::ObjectStore(const std::vector<memory::LocalRegion*>& regions, memory::SlabAllocator* allocator,
                         ReadPolicy policy)
    : allocator_(allocator), policy_(std::move(policy)) {
  for (memory::LocalRegion* region : regions) regions_[region->id()] = region;
}

absl::StatusOr<LocalObject> ObjectStore::Resolve(const ObjectRef& ref) const {
  auto it = regions_.find(ref.address.region);
  if (it == regions_.end()) {
    return absl::NotFoundError(absl::StrCat(ref.address.ToString(), " is not in this node's memory"));
  }
  if (ref.capacity < kHeaderBytes || ref.capacity % 64 != 0 || ref.address.offset % 64 != 0 ||
      uint64_t{ref.address.offset} + ref.capacity > it->second->size()) {
    return absl::OutOfRangeError(absl::StrCat("object reference ", ref.address.ToString(), " of ", ref.capacity,
                                              " bytes is not a slot of region ", ref.address.region));
  }
  return LocalObject(it->second->at(ref.address.offset), ref.capacity);
}

absl::StatusOr<ObjectRef> ObjectStore::Allocate(uint32_t payload_capacity) {
  auto slot = allocator_->Allocate(uint64_t{payload_capacity} + kHeaderBytes);
  if (!slot.ok()) return slot.status();
  ObjectRef ref{slot->address, 0, slot->capacity};
  auto object = Resolve(ref);
  if (!object.ok()) return object.status();
  auto version = object->Lock(policy_.max_attempts);
  if (!version.ok()) return version.status();
  // A reused slot keeps the incarnation its Free moved to (stale references stay stale); fresh memory
  // starts at 0.
  ref.incarnation = object->ReadHeader().incarnation;
  object->InstallAndUnlock(*version, {}, ref.incarnation, kLiveFlag);
  return ref;
}

absl::StatusOr<uint64_t> ObjectStore::LockLive(LocalObject& object, const ObjectRef& ref, ObjectHeader* header) {
  auto version = object.Lock(policy_.max_attempts);
  if (!version.ok()) return version.status();
  *header = object.ReadHeader();  // consistent: we hold the lock
  if (header->incarnation != ref.incarnation || !header->live() || header->capacity != ref.capacity) {
    object.Unlock(*version);
    return VerdictStatus(header->capacity != ref.capacity ? Verdict::kWrongShape : Verdict::kStale, ref);
  }
  return version;
}

absl::Status ObjectStore::Write(const ObjectRef& ref, std::span<const std::byte> payload) {
  if (payload.size() > ref.payload_capacity()) {
    return absl::OutOfRangeError(absl::StrCat("payload of ", payload.size(), " bytes exceeds the object's ",
                                              ref.payload_capacity()));
  }
  auto object = Resolve(ref);
  if (!object.ok()) return object.status();
  ObjectHeader header;
  auto version = LockLive(*object, ref, &header);
  if (!version.ok()) return version.status();
  object->InstallAndUnlock(*version, payload, ref.incarnation, header.flags);
  return absl::OkStatus();
}

absl::StatusOr<std::span<const std::byte>> ObjectStore::Read(const ObjectRef& ref, std::vector<std::byte>& buffer,
                                                             ReadStats* stats) {
  auto object = Resolve(ref);
  if (!object.ok()) return object.status();
  return ReadWithRetries(ref, buffer, policy_, stats, [&](std::span<std::byte> copy) {
    object->CopyTo(copy);
    return absl::OkStatus();
  });
}

absl::Status ObjectStore::Free(const ObjectRef& ref) {
  auto object = Resolve(ref);
  if (!object.ok()) return object.status();
  ObjectHeader header;
  auto version = LockLive(*object, ref, &header);
  if (!version.ok()) return version.status();
  // Not live, next incarnation: from now on every copy of this slot fails every old reference.
  object->InstallAndUnlock(*version, {}, ref.incarnation + 1, 0);
  return allocator_->Free(ref.address);
}

}  // namespace fathom::object
