#include "txn/backup_store.h"

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "platform/object/local_object.h"

namespace fathom::txn {

absl::StatusOr<BackupStore::Copy*> BackupStore::Find(uint32_t region, uint64_t region_bytes) const {
  MutexLock lock(&mu_);
  auto it = copies_.find(region);
  if (it == copies_.end()) return nullptr;
  if (it->second->bytes != region_bytes) {
    return absl::FailedPreconditionError(absl::StrCat("backup of region ", region, " has ", it->second->bytes,
                                                      " bytes, the primary's has ", region_bytes));
  }
  return it->second.get();
}

absl::StatusOr<BackupStore::Copy*> BackupStore::CopyOf(uint32_t region, uint64_t region_bytes) {
  absl::StatusOr<Copy*> found = Find(region, region_bytes);
  if (!found.ok() || *found != nullptr) return found;
  if (region_bytes == 0 || region_bytes % 64 != 0 || region_bytes > (uint64_t{1} << 32)) {
    return absl::InvalidArgumentError(absl::StrCat("region ", region, " of ", region_bytes, " bytes"));
  }
  // Zeroed registered memory takes tens of milliseconds per 64 MiB: made outside mu_, so appliers of
  // other regions' copies do not wait for it; creators wait for each other (one copy per region).
  MutexLock creating(&create_mu_);
  found = Find(region, region_bytes);
  if (!found.ok() || *found != nullptr) return found;
  auto copy = std::make_unique<Copy>();
  CopyAllocator allocator;
  {
    MutexLock lock(&mu_);
    allocator = allocator_;
  }
  if (allocator) {
    auto registered = allocator(region, region_bytes);
    if (!registered.ok()) return registered.status();
    copy->registered = *registered;
    copy->data = copy->registered->data();
  } else {
    copy->words = std::make_unique<uint64_t[]>(region_bytes / 8);  // value-initialised: zero
    copy->data = reinterpret_cast<std::byte*>(copy->words.get());
  }
  copy->bytes = region_bytes;
  Copy* raw = copy.get();
  MutexLock lock(&mu_);
  copies_[region] = std::move(copy);
  return raw;
}

absl::StatusOr<bool> BackupStore::Apply(const WriteEntry& entry, uint64_t region_bytes) {
  auto copy = CopyOf(entry.ref.address.region, region_bytes);
  if (!copy.ok()) return copy.status();
  if (uint64_t{entry.ref.address.offset} + entry.ref.capacity > (*copy)->bytes) {
    return absl::OutOfRangeError(absl::StrCat(entry.ref.address.ToString(), " + ", entry.ref.capacity,
                                              " is outside the backup of region ", entry.ref.address.region));
  }
  std::byte* slot = (*copy)->data + entry.ref.address.offset;
  object::LocalObject object(slot, entry.ref.capacity);
  // Appliers exclude each other for the instant of an install; nobody holds the lock longer.
  auto locked = object.Lock(/*max_attempts=*/1 << 20);
  if (!locked.ok()) return locked.status();
  if (*locked >= entry.version) {
    object.Unlock(*locked);
    return false;
  }
  object.InstallAtVersionAndUnlock(entry.version, std::as_bytes(std::span(entry.payload)), entry.new_incarnation(),
                                   entry.new_flags());
  const uint64_t end = uint64_t{entry.ref.address.offset} + entry.ref.capacity;
  uint64_t seen = (*copy)->written_end.load(std::memory_order_relaxed);
  while (seen < end && !(*copy)->written_end.compare_exchange_weak(seen, end, std::memory_order_release)) {
  }
  return true;
}

std::span<const std::byte> BackupStore::View(uint32_t region) const {
  MutexLock lock(&mu_);
  auto it = copies_.find(region);
  if (it == copies_.end()) return {};
  return std::span<const std::byte>(it->second->data, it->second->bytes);
}

void BackupStore::set_allocator(CopyAllocator allocator) {
  MutexLock lock(&mu_);
  allocator_ = std::move(allocator);
}

absl::StatusOr<memory::LocalRegion*> BackupStore::Registered(uint32_t region, uint64_t region_bytes) {
  auto copy = CopyOf(region, region_bytes);
  if (!copy.ok()) return copy.status();
  if ((*copy)->registered == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("the backup of region ", region, " is not registered memory"));
  }
  return (*copy)->registered;
}

uint64_t BackupStore::WrittenEnd(uint32_t region) const {
  MutexLock lock(&mu_);
  auto it = copies_.find(region);
  return it == copies_.end() ? 0 : it->second->written_end.load(std::memory_order_acquire);
}

size_t BackupStore::regions() const {
  MutexLock lock(&mu_);
  return copies_.size();
}

}  // namespace fathom::txn
