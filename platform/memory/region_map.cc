#include "platform/memory/region_map.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "platform/memory/global_address.h"

namespace fathom::memory {
namespace {

std::vector<uint32_t> SortedUnique(std::vector<uint32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

RegionMap RegionMap::ByOwner(uint64_t epoch, std::vector<uint32_t> members, int backups) {
  RegionMap map;
  map.epoch_ = epoch;
  map.members_ = SortedUnique(std::move(members));
  map.backups_ = backups;
  map.by_owner_ = true;
  return map;
}

RegionMap RegionMap::Placed(uint64_t epoch, std::vector<uint32_t> members, int backups,
                            absl::flat_hash_map<uint32_t, RegionReplicas> regions) {
  RegionMap map;
  map.epoch_ = epoch;
  map.members_ = SortedUnique(std::move(members));
  map.backups_ = backups;
  map.regions_ = std::move(regions);
  return map;
}

void RegionMap::SetCoordinators(absl::flat_hash_map<uint32_t, uint64_t> joined_epochs, uint32_t manager) {
  has_coordinators_ = true;
  joined_epochs_ = std::move(joined_epochs);
  manager_ = manager;
}

bool RegionMap::CoordinatorGone(uint32_t node, uint64_t txn_epoch) const {
  if (!has_coordinators_) return false;
  auto it = joined_epochs_.find(node);
  return it == joined_epochs_.end() || it->second > txn_epoch;
}

uint64_t RegionMap::JoinedEpoch(uint32_t node) const {
  auto it = joined_epochs_.find(node);
  return it == joined_epochs_.end() ? 0 : it->second;
}

bool RegionMap::IsMember(uint32_t node) const { return std::binary_search(members_.begin(), members_.end(), node); }

absl::StatusOr<RegionReplicas> RegionMap::ReplicasOf(uint32_t region) const {
  if (!by_owner_) {
    auto it = regions_.find(region);
    if (it == regions_.end()) {
      return absl::NotFoundError(absl::StrCat("region ", region, " is not in configuration ", epoch_, "'s region map"));
    }
    return it->second;
  }
  RegionReplicas replicas;
  replicas.primary = OwnerOfRegion(region);
  if (replicas.primary == 0) return absl::NotFoundError(absl::StrCat("region ", region, " belongs to no node"));
  auto it = std::lower_bound(members_.begin(), members_.end(), replicas.primary);
  if (it == members_.end() || *it != replicas.primary) return replicas;  // its primary left: no backups known
  size_t at = static_cast<size_t>(it - members_.begin());
  for (int i = 0; i < backups_ && i + 1 < static_cast<int>(members_.size()); ++i) {
    at = (at + 1) % members_.size();
    replicas.backups.push_back(members_[at]);
  }
  return replicas;
}

std::vector<uint32_t> RegionMap::PrimaryRegionsOf(uint32_t node) const {
  std::vector<uint32_t> regions;
  for (const auto& [id, replicas] : regions_) {
    if (replicas.primary == node) regions.push_back(id);
  }
  std::sort(regions.begin(), regions.end());
  return regions;
}

bool RegionMap::ServesOwnMemory(uint32_t node) const {
  if (!IsMember(node)) return false;
  if (by_owner_) return true;
  for (const auto& [id, replicas] : regions_) {
    if (replicas.primary == node && OwnerOfRegion(id) == node) return true;
  }
  return false;
}

std::vector<uint32_t> RegionMap::BackupRegionsOf(uint32_t node) const {
  std::vector<uint32_t> regions;
  for (const auto& [id, replicas] : regions_) {
    if (std::find(replicas.backups.begin(), replicas.backups.end(), node) != replicas.backups.end()) {
      regions.push_back(id);
    }
  }
  std::sort(regions.begin(), regions.end());
  return regions;
}

absl::StatusOr<uint32_t> RegionMap::PrimaryOf(uint32_t region) const {
  if (by_owner_) {
    const uint32_t owner = OwnerOfRegion(region);
    if (owner == 0) return absl::NotFoundError(absl::StrCat("region ", region, " belongs to no node"));
    return owner;
  }
  auto it = regions_.find(region);
  if (it == regions_.end()) {
    return absl::NotFoundError(absl::StrCat("region ", region, " is not in configuration ", epoch_, "'s region map"));
  }
  return it->second.primary;
}

absl::StatusOr<std::vector<uint32_t>> RegionMap::BackupsOf(uint32_t region) const {
  absl::StatusOr<RegionReplicas> replicas = ReplicasOf(region);
  if (!replicas.ok()) return replicas.status();
  if (!IsMember(replicas->primary)) {
    return absl::UnavailableError(absl::StrCat("node ", replicas->primary, " (primary of region ", region,
                                               ") is not a member of configuration ", epoch_));
  }
  if (static_cast<int>(replicas->backups.size()) != backups_) {
    return absl::UnavailableError(absl::StrCat("region ", region, " has ", replicas->backups.size(), " of ", backups_,
                                               " backups in configuration ", epoch_, " (", members_.size(),
                                               " members)"));
  }
  for (uint32_t backup : replicas->backups) {
    if (!IsMember(backup)) {
      return absl::UnavailableError(absl::StrCat("node ", backup, " (backup of region ", region,
                                                 ") is not a member of configuration ", epoch_,
                                                 "; only recovery replaces a replica"));
    }
  }
  return std::move(replicas->backups);
}

RegionDirectory::RegionDirectory() : current_(std::make_shared<const RegionMap>()) {}

void RegionDirectory::Set(RegionMap map) {
  auto next = std::make_shared<const RegionMap>(std::move(map));
  MutexLock lock(&mu_);
  current_ = std::move(next);
  generation_.fetch_add(1, std::memory_order_release);
}

bool RegionDirectory::SetIfUnset(RegionMap map) {
  auto next = std::make_shared<const RegionMap>(std::move(map));
  MutexLock lock(&mu_);
  if (current_->epoch() != 0) return false;
  current_ = std::move(next);
  generation_.fetch_add(1, std::memory_order_release);
  return true;
}

void RegionDirectory::MarkFenced(uint64_t epoch) {
  uint64_t seen = fenced_.load(std::memory_order_relaxed);
  while (seen < epoch && !fenced_.compare_exchange_weak(seen, epoch, std::memory_order_acq_rel)) {
  }
}

std::shared_ptr<const RegionMap> RegionDirectory::Current() const {
  MutexLock lock(&mu_);
  return current_;
}

}  // namespace fathom::memory
