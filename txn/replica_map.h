// Where each region's replicas are. A region's primary is the node that owns it (region ids are
// node id << 16 | index); its f backups are the f members that follow the primary in id order, wrapping
// around, so replicas are on f+1 distinct nodes whenever the cluster has f+1 members.
//
// ReplicaSet is one configuration's view, immutable; ReplicaMap holds the current one, replaced when the
// configuration changes. Commits read it on every node thread, so each thread keeps the set it last took
// and takes the new one only when the generation (an atomic counter) moved.
#ifndef FATHOM_TXN_REPLICA_MAP_H_
#define FATHOM_TXN_REPLICA_MAP_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "platform/memory/global_address.h"

namespace fathom::txn {

// Today the primary of a region is the node that owns it (platform/memory/global_address.h).
inline uint32_t PrimaryOf(uint32_t region) { return memory::OwnerOfRegion(region); }

class ReplicaSet {
 public:
  ReplicaSet(uint64_t epoch, std::vector<uint32_t> members, int backups);

  uint64_t epoch() const { return epoch_; }
  const std::vector<uint32_t>& members() const { return members_; }  // sorted
  int backups_per_region() const { return backups_; }
  // The backups of `region`: Unavailable if its primary is not a member or there are fewer than f+1 members.
  absl::StatusOr<std::vector<uint32_t>> BackupsOf(uint32_t region) const;

 private:
  uint64_t epoch_;
  std::vector<uint32_t> members_;
  int backups_;
};

class ReplicaMap {
 public:
  explicit ReplicaMap(int backups);

  // The configuration `epoch` with these members (any order; duplicates ignored).
  void Set(uint64_t epoch, std::vector<uint32_t> members);
  std::shared_ptr<const ReplicaSet> Current() const;
  // Moves on with every Set.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  const int backups_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const ReplicaSet> current_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> generation_{0};
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_REPLICA_MAP_H_
