#include "txn/replica_map.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"

namespace fathom::txn {

ReplicaSet::ReplicaSet(uint64_t epoch, std::vector<uint32_t> members, int backups)
    : epoch_(epoch), members_(std::move(members)), backups_(backups) {
  std::sort(members_.begin(), members_.end());
  members_.erase(std::unique(members_.begin(), members_.end()), members_.end());
}

absl::StatusOr<std::vector<uint32_t>> ReplicaSet::BackupsOf(uint32_t region) const {
  const uint32_t primary = PrimaryOf(region);
  auto it = std::lower_bound(members_.begin(), members_.end(), primary);
  if (it == members_.end() || *it != primary) {
    return absl::UnavailableError(absl::StrCat("node ", primary, " (primary of region ", region,
                                               ") is not a member of configuration ", epoch_));
  }
  if (static_cast<int>(members_.size()) < backups_ + 1) {
    return absl::UnavailableError(absl::StrCat(backups_, " backups per region need ", backups_ + 1,
                                               " members; configuration ", epoch_, " has ", members_.size()));
  }
  std::vector<uint32_t> backups;
  size_t at = static_cast<size_t>(it - members_.begin());
  for (int i = 0; i < backups_; ++i) {
    at = (at + 1) % members_.size();
    backups.push_back(members_[at]);
  }
  return backups;
}

ReplicaMap::ReplicaMap(int backups)
    : backups_(backups), current_(std::make_shared<const ReplicaSet>(0, std::vector<uint32_t>{}, backups)) {}

void ReplicaMap::Set(uint64_t epoch, std::vector<uint32_t> members) {
  auto next = std::make_shared<const ReplicaSet>(epoch, std::move(members), backups_);
  MutexLock lock(&mu_);
  current_ = std::move(next);
  generation_.fetch_add(1, std::memory_order_release);
}

std::shared_ptr<const ReplicaSet> ReplicaMap::Current() const {
  MutexLock lock(&mu_);
  return current_;
}

}  // namespace fathom::txn
