// ReplicaMap: where each region's replicas are. A region's primary is the node that owns it (region ids
// are node id << 16 | index); its f backups are the f members that follow the primary in id order,
// wrapping around, so replicas are on f+1 distinct nodes whenever the cluster has f+1 members.
// Thread-safe: commits on every node thread read it, a configuration change replaces it.
#ifndef FATHOM_TXN_REPLICA_MAP_H_
#define FATHOM_TXN_REPLICA_MAP_H_

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace fathom::txn {

inline uint32_t PrimaryOf(uint32_t region) { return region >> 16; }

class ReplicaMap {
 public:
  explicit ReplicaMap(int backups) : backups_(backups) {}

  // The configuration `epoch` with these members (any order, no duplicates).
  void Set(uint64_t epoch, std::vector<uint32_t> members);
  uint64_t epoch() const;
  int backups_per_region() const { return backups_; }

  // The backups of `region`'s primary: Unavailable if the primary is not a member or there are fewer than
  // f+1 members.
  absl::StatusOr<std::vector<uint32_t>> BackupsOf(uint32_t region) const;
  // The primaries whose regions `node` backs up.
  std::vector<uint32_t> BackedUpBy(uint32_t node) const;

 private:
  const int backups_;
  mutable absl::Mutex mu_;
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<uint32_t> members_ ABSL_GUARDED_BY(mu_);  // sorted
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_REPLICA_MAP_H_
