#include "platform/memory/region_table.h"

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"

namespace fathom::memory {

absl::Status RegionTable::Add(const RegionInfo& info) {
  if (info.id == kNullRegion) return absl::InvalidArgumentError("region id 0 is reserved for null");
  if (info.size == 0 || info.size > kMaxRegionBytes) {
    return absl::InvalidArgumentError(absl::StrCat("region ", info.id, ": size ", info.size, " not in [1, 4 GiB]"));
  }
  if (info.descriptor.length != info.size) {
    return absl::InvalidArgumentError(absl::StrCat("region ", info.id, ": descriptor length ",
                                                   info.descriptor.length, " != size ", info.size));
  }
  MutexLock lock(&mu_);
  auto [it, inserted] = regions_.try_emplace(info.id, info);
  if (!inserted) {
    const RegionInfo& old = it->second;
    if (old.owner_node != info.owner_node || old.size != info.size ||
        old.descriptor.Serialize() != info.descriptor.Serialize()) {
      return absl::AlreadyExistsError(absl::StrCat("region ", info.id, " is already known with other contents"));
    }
  }
  return absl::OkStatus();
}

void RegionTable::Remove(uint32_t id) {
  MutexLock lock(&mu_);
  regions_.erase(id);
}

std::optional<RegionInfo> RegionTable::Find(uint32_t id) const {
  MutexLock lock(&mu_);
  auto it = regions_.find(id);
  if (it == regions_.end()) return std::nullopt;
  return it->second;
}

size_t RegionTable::size() const {
  MutexLock lock(&mu_);
  return regions_.size();
}

absl::Status RegionTable::CheckRange(GlobalAddress address, uint64_t length) const {
  MutexLock lock(&mu_);
  auto it = regions_.find(address.region);
  if (it == regions_.end()) return absl::NotFoundError(absl::StrCat("unknown region in ", address.ToString()));
  const uint64_t size = it->second.size;
  if (length == 0 || address.offset >= size || length > size - address.offset) {
    return absl::OutOfRangeError(absl::StrCat("[", address.ToString(), ", +", length, ") outside region ",
                                              address.region, " of ", size, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace fathom::memory
