// RegionMap: who holds each region in one configuration — its primary and its f backups, on f+1 distinct
// nodes. It is the one answer to "who holds this object or region": routing (NodeThread::RouteTo), a
// commit's primaries and backups, validation, KV's home nodes and a restart's backup copies all ask it.
//
// A coordinated cluster's map is the configuration's placement (coordinator::RegionMapOf): chosen when a
// member joins with its regions and never changed by a later membership change (only recovery moves a
// replica). A static cluster (fixed peers, no configuration manager) has no placement to read; its map is
// a rule fixed for the cluster's life: the node that owns a region (NodeRegionId) is its primary and the f
// members after it in id order, wrapping around, are its backups.
//
//   RegionMap map = RegionMap::ByOwner(/*epoch=*/1, {1, 2, 3}, /*backups=*/1);
//   ASSIGN_OR_RETURN(uint32_t primary, map.PrimaryOf(region));
//   ASSIGN_OR_RETURN(std::vector<uint32_t> backups, map.BackupsOf(region));  // Unavailable if one left
//
// RegionDirectory holds a node's current map; node threads take a new one only when its generation moved.
#ifndef FATHOM_PLATFORM_MEMORY_REGION_MAP_H_
#define FATHOM_PLATFORM_MEMORY_REGION_MAP_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace fathom::memory {

struct RegionReplicas {
  uint32_t primary = 0;
  std::vector<uint32_t> backups;
  // The region's length as the configuration records it; 0 where the map does not know it (ByOwner).
  // A backup sizes its copy by it, so it needs no connection to the primary to accept a record.
  uint64_t bytes = 0;
  // Backups still receiving a copy of the region from its primary (data recovery): they take new commits.
  std::vector<uint32_t> filling;
};

class RegionMap {
 public:
  // Nothing placed, no members (a node before it knows its cluster).
  RegionMap() = default;
  // A static cluster's rule (see above). `members` in any order, duplicates ignored.
  static RegionMap ByOwner(uint64_t epoch, std::vector<uint32_t> members, int backups);
  // A configuration's placement: exactly the regions listed.
  static RegionMap Placed(uint64_t epoch, std::vector<uint32_t> members, int backups,
                          absl::flat_hash_map<uint32_t, RegionReplicas> regions);

  uint64_t epoch() const { return epoch_; }
  // The members that hold data (sorted): transactions replicate over them and log epochs include them.
  const std::vector<uint32_t>& members() const { return members_; }
  bool IsMember(uint32_t node) const;
  int backups_per_region() const { return backups_; }

  // Where `region` is served, whether or not that node is still a member (the caller's connection says
  // whether it can be reached). NotFound: the region is not in this map.
  absl::StatusOr<uint32_t> PrimaryOf(uint32_t region) const;
  // Its f backups, for a write: Unavailable unless the primary and all f backups are members (a replica
  // that left is replaced only by recovery), NotFound if the region is not in this map.
  absl::StatusOr<std::vector<uint32_t>> BackupsOf(uint32_t region) const;
  // Primary and backups as listed (members or not). NotFound if the region is not in this map.
  absl::StatusOr<RegionReplicas> ReplicasOf(uint32_t region) const;
  // The placed regions whose primary is `node`, sorted (none under the static rule).
  std::vector<uint32_t> PrimaryRegionsOf(uint32_t node) const;
  // Whether `node` is a member and the primary of some region of its own memory, so objects can be
  // allocated there (a member that came back under its id serves none: recovery gave its regions to
  // others). Every member under the static rule.
  bool ServesOwnMemory(uint32_t node) const;
  // The placed regions `node` is a backup of (filling or not), sorted (none under the static rule).
  std::vector<uint32_t> BackupRegionsOf(uint32_t node) const;

  // Who may coordinate transactions: every member, client-only ones too, each with the epoch of the
  // configuration that admitted its current incarnation; and the configuration manager (0: none).
  void SetCoordinators(absl::flat_hash_map<uint32_t, uint64_t> joined_epochs, uint32_t manager);
  uint32_t manager() const { return manager_; }
  // Whether the coordinator of transactions `node` began in configuration `txn_epoch` is gone: `node` is no
  // member, or its current incarnation joined after that epoch (transaction recovery decides them). Never
  // for a map without coordinators (a static cluster's).
  bool CoordinatorGone(uint32_t node, uint64_t txn_epoch) const;
  // The epoch of the configuration that admitted `node`'s current incarnation; 0 if it is no member, and
  // for a map without coordinators.
  uint64_t JoinedEpoch(uint32_t node) const;

 private:
  uint64_t epoch_ = 0;
  std::vector<uint32_t> members_;
  int backups_ = 0;
  bool by_owner_ = false;
  absl::flat_hash_map<uint32_t, RegionReplicas> regions_;  // Placed only
  bool has_coordinators_ = false;
  absl::flat_hash_map<uint32_t, uint64_t> joined_epochs_;  // by member
  uint32_t manager_ = 0;
};

class RegionDirectory {
 public:
  RegionDirectory();
  void Set(RegionMap map);
  // Sets `map` only if nothing but the initial map (epoch 0) was set: a default that a configuration,
  // already set or set later, overrides. Returns whether it set it.
  bool SetIfUnset(RegionMap map);
  std::shared_ptr<const RegionMap> Current() const;
  // Moves on with every Set.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // The latest configuration epoch whose leavers this node has disconnected (the membership follower
  // marks it): everything a node not in that configuration, or an earlier incarnation of a member, wrote
  // into this node's rings has been handled (msg::Messenger::RemovePeer drains). Never goes back.
  void MarkFenced(uint64_t epoch);
  uint64_t fenced() const { return fenced_.load(std::memory_order_acquire); }

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const RegionMap> current_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> fenced_{0};
};

}  // namespace fathom::memory

#endif  // FATHOM_PLATFORM_MEMORY_REGION_MAP_H_
