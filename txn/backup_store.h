// BackupStore: this node's copies of the regions it backs up. Backups apply committed writes at
// truncation (FaRM), from any node thread, so each object is updated under its lock word (a CPU
// compare-and-swap, as on a primary) and only forward: a state older than the copy's is skipped, which
// makes the order in which threads apply truncated records irrelevant. Copies are plain memory, zeroed,
// laid out exactly as the primary's region, so after quiescence they are byte-identical to it. Copies are
// fabric-registered regions when the node gives an allocator (TransactionService does): a backup promoted
// to primary serves its copy as the region itself (docs/recovery.md).
#ifndef FATHOM_TXN_BACKUP_STORE_H_
#define FATHOM_TXN_BACKUP_STORE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "platform/memory/region.h"
#include "txn/records.h"

namespace fathom::txn {

class BackupStore {
 public:
  // Registered, zeroed memory for the copy of `region`, `bytes` long, owned by the node
  // (Node::AllocateRegionCopy: released before the fabric it is registered with).
  using CopyAllocator = std::function<absl::StatusOr<memory::LocalRegion*>(uint32_t region, uint64_t bytes)>;
  BackupStore() = default;
  // Copies made from now on come from `allocator` (plain memory without one). Set before any Apply.
  void set_allocator(CopyAllocator allocator);

  // Installs `entry`'s state (entry.version is the new version) into the copy of its region, which is
  // `region_bytes` long (created on first use). OutOfRange if the slot is outside the region.
  // Returns whether it changed the copy (false: the copy already had that state or a newer one).
  absl::StatusOr<bool> Apply(const WriteEntry& entry, uint64_t region_bytes);
  // The copy of `region` (empty if there is none). For comparisons after quiescence.
  std::span<const std::byte> View(uint32_t region) const;
  size_t regions() const;
  // The end of the highest slot an Apply wrote into the copy of `region` (0: none, or no copy): no slot
  // of the copy lies past it.
  uint64_t WrittenEnd(uint32_t region) const;
  // The copy of `region` as registered memory, made (zeroed: nothing was ever written to it) if there is
  // none, for this node to serve the region as its primary. FailedPrecondition without an allocator.
  absl::StatusOr<memory::LocalRegion*> Registered(uint32_t region, uint64_t region_bytes);

 private:
  struct Copy {
    memory::LocalRegion* registered = nullptr;  // with an allocator (the node's)
    std::unique_ptr<uint64_t[]> words;                // without: 8-byte aligned, zeroed
    std::byte* data = nullptr;
    uint64_t bytes = 0;
    std::atomic<uint64_t> written_end{0};  // WrittenEnd
  };
  // The copy of `region` (null if there is none yet); FailedPrecondition if it has another size.
  absl::StatusOr<Copy*> Find(uint32_t region, uint64_t region_bytes) const;
  absl::StatusOr<Copy*> CopyOf(uint32_t region, uint64_t region_bytes);

  absl::Mutex create_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // held while a copy is made
  mutable absl::Mutex mu_;
  CopyAllocator allocator_ ABSL_GUARDED_BY(mu_);
  // Copies are never removed while the store lives, so a pointer to one stays valid without the lock.
  absl::flat_hash_map<uint32_t, std::unique_ptr<Copy>> copies_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_BACKUP_STORE_H_
