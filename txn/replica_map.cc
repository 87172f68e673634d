#include "txn/replica_map.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"

namespace fathom::txn {

void ReplicaMap::Set(uint64_t epoch, std::vector<uint32_t> members) {
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  MutexLock lock(&mu_);
  epoch_ = epoch;
  members_ = std::move(members);
}

uint64_t ReplicaMap::epoch() const {
  MutexLock lock(&mu_);
  return epoch_;
}

absl::StatusOr<std::vector<uint32_t>> ReplicaMap::BackupsOf(uint32_t region) const {
  const uint32_t primary = PrimaryOf(region);
  MutexLock lock(&mu_);
  auto it = std::find(members_.begin(), members_.end(), primary);
  if (it == members_.end()) {
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

std::vector<uint32_t> ReplicaMap::BackedUpBy(uint32_t node) const {
  std::vector<uint32_t> primaries;
  MutexLock lock(&mu_);
  auto it = std::find(members_.begin(), members_.end(), node);
  if (it == members_.end() || static_cast<int>(members_.size()) < backups_ + 1) return primaries;
  size_t at = static_cast<size_t>(it - members_.begin());
  for (int i = 0; i < backups_; ++i) {
    at = (at + members_.size() - 1) % members_.size();
    primaries.push_back(members_[at]);
  }
  return primaries;
}

}  // namespace fathom::txn
