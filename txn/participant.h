// Participant: the primary and backup side of the commit protocol on one node thread. It receives the
// records coordinators write into this thread's rings (or hands it directly, for objects local to the
// coordinator) and keeps them in its transaction log until they are truncated:
//   LOCK           locks each object with a CPU compare-and-swap if its version is unchanged, replies with
//                  the versions locked, and keeps the record (primary);
//   COMMIT-BACKUP  keeps the record; nothing is applied yet (backup);
//   COMMIT-PRIMARY installs the new values, bumps versions, unlocks (primary);
//   ABORT          unlocks what LOCK locked, or drops a backup's record;
//   truncation     forgets committed records; a backup applies its records to its copies then (FaRM).
// Records stay until truncated so that recovery (a later step) finds every transaction that may have
// committed in the logs of its surviving replicas.
//
// Threading: one node thread; the BackupStore is shared by the node's threads.
#ifndef FATHOM_TXN_PARTICIPANT_H_
#define FATHOM_TXN_PARTICIPANT_H_

#include <cstdint>
#include <functional>
#include <span>
#include <tuple>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "platform/memory/slab_allocator.h"
#include "platform/object/object_store.h"
#include "txn/backup_store.h"
#include "txn/log_epochs.h"
#include "txn/records.h"
#include "txn/recovery_records.h"
#include "txn/txn_options.h"

namespace fathom::txn {

struct ParticipantStats {
  uint64_t locks_granted = 0;
  uint64_t locks_refused = 0;
  uint64_t commits_installed = 0;
  uint64_t aborts = 0;
  uint64_t backup_records = 0;
  uint64_t backup_objects_applied = 0;
  uint64_t backup_objects_skipped = 0;  // the copy already had a newer state
  uint64_t truncated = 0;
  uint64_t rejected = 0;                // records that referred to nothing this thread knows
  uint64_t errors = 0;                  // local failures while installing (logged)
  uint64_t duplicate_commits = 0;       // COMMIT-PRIMARY copies of transactions already committed here
  uint64_t reservations_of_gone_freed = 0;  // slots reserved for coordinators that left, freed unused
  uint64_t records_of_gone_refused = 0;     // records of coordinators removed since, refused once fenced

  ParticipantStats& operator+=(const ParticipantStats& o) {
    locks_granted += o.locks_granted;
    locks_refused += o.locks_refused;
    commits_installed += o.commits_installed;
    aborts += o.aborts;
    backup_records += o.backup_records;
    backup_objects_applied += o.backup_objects_applied;
    backup_objects_skipped += o.backup_objects_skipped;
    truncated += o.truncated;
    rejected += o.rejected;
    errors += o.errors;
    duplicate_commits += o.duplicate_commits;
    reservations_of_gone_freed += o.reservations_of_gone_freed;
    records_of_gone_refused += o.records_of_gone_refused;
    return *this;
  }
};

class Participant {
 public:
  // `region_bytes(region)` is the size of a region this node may back up (0 if unknown).
  Participant(object::ObjectStore* store, memory::SlabAllocator* allocator, BackupStore* backups,
              std::function<uint64_t(uint32_t region)> region_bytes);

  // LOCK. The versions locked, in entry order, and the log epoch they are granted in; Aborted if an object
  // is locked, at another version, or not in the expected state, or a log epoch is closing (nothing stays
  // locked then); InvalidArgument if an entry is not this node's.
  absl::StatusOr<LockGrant> Lock(const Record& record);
  // COMMIT-PRIMARY of a locked transaction. NotFound if there is none.
  absl::Status CommitPrimary(const TxnId& id);
  // A COMMIT-PRIMARY sent again (kCommitPrimaryAgainMessage): as CommitPrimary if the transaction still
  // holds its locks here; otherwise this node handled the first copy (and maybe its truncation), and it
  // is ignored (counted in duplicate_commits).
  absl::Status CommitPrimaryAgain(const TxnId& id);
  // COMMIT-BACKUP: keeps the record (entry versions are the new ones) until truncation.
  absl::Status CommitBackup(Record record);
  // ABORT: undoes a LOCK or drops a backup record. Unknown ids are ignored (nothing was kept).
  void Abort(const TxnId& id);
  // This node was removed from the configuration while alive and is about to join again (issue 58,
  // path 5): every transaction it holds records of was decided without it (its coordinator gave up on
  // this node, or recovery decided it where the region went), and no ABORT or truncation will come for
  // them. Its locks are undone (and their log epochs released, or epochs would never close again), its
  // backup records and installed records forgotten, and so are the marks, truncation tombstones and
  // recovery outcomes it kept: what it says in a later recovery must not speak for the earlier admission
  // (its own coordinator threads' marks went on while it did not know it was removed, settling ABORTs
  // the members refused; random_faults seed 584). Returns how many transactions it let go.
  size_t ForgetAfterRemoval();
  // A slot with room for `payload_capacity` bytes, reserved for transactions of `coordinator` (a node that
  // asked in configuration `epoch`): it becomes a live object only when one of them allocates it and
  // commits (its header is untouched until then); a LOCK from another node may not allocate it.
  absl::StatusOr<object::ObjectRef> Reserve(uint32_t payload_capacity, uint32_t coordinator, uint64_t epoch);
  // Gives back a slot reserved for `coordinator` that its transaction did not use. InvalidArgument if it
  // is not reserved here for that coordinator (a stale release, after the slot was freed and reserved
  // for another, must not take it from its new holder).
  absl::Status Release(const object::ObjectRef& ref, uint32_t coordinator);
  // Frees the slots reserved for coordinators that `gone(node, epoch)` says are gone, except those a LOCK
  // held here allocates (recovery decides that transaction; an abort leaves them reserved for a later
  // call). Returns how many were freed; `*kept` is set to how many of gone coordinators stay reserved.
  size_t ReleaseReservationsOfGone(const std::function<bool(uint32_t node, uint64_t epoch)>& gone, size_t* kept);
  size_t reserved() const { return reserved_.size(); }
  // Told of every state installed from now on (TxnOptions::on_install). Set before the thread runs.
  void set_install_observer(InstallObserver observer) { on_install_ = std::move(observer); }
  // The node's log epochs (log_epochs.h): locks are granted in its current epoch, and it is told of
  // every lock held until it is installed or undone.
  // Null: the cluster runs none. Set before the thread runs.
  void set_log_epochs(LogEpochs* epochs) { epochs_ = epochs; }

  // Truncation of these transactions of coordinator (node, thread), begun in configuration `epoch`. What
  // was held of each is forgotten, with a tombstone until the coordinator's mark settles it.
  void Truncate(uint64_t epoch, uint32_t node, uint16_t thread, std::span<const uint64_t> counters);
  // The mark (records.h) of coordinator thread (node, thread), from a record it wrote (or, for this
  // node's own thread, at once): the truncation tombstones it settles go. A mark of an older incarnation
  // than the one heard last is ignored; no mark (incarnation 0) too.
  void OnMark(uint32_t node, uint16_t thread, const CoordinatorMark& mark);

  // COMMIT-BACKUP records kept (neither truncated nor aborted) that write `region`.
  size_t BackupRecordsFor(uint32_t region) const;
  // Data recovery: installs object states the region's primary copied to this node, a new backup, into
  // its copy, each only if newer than what the copy has (as at truncation). InvalidArgument if an entry
  // is outside a region this node backs up.
  absl::Status ApplyFill(const Record& record);
  // Transactions begun in a configuration before `epoch` that hold locks on objects of `region` here
  // (not yet committed or aborted): their commits go to the backups of that older configuration.
  size_t OlderLocksOn(uint32_t region, uint64_t epoch) const;
  // Transaction recovery (recovery.h): what this thread holds of transactions for which `gone(id)` says
  // their coordinator is gone, at most `limit` of them (in no particular order).
  std::vector<Hold> HeldFor(const std::function<bool(const TxnId&)>& gone, size_t limit) const;
  // The marks heard from coordinator threads for which `gone(node, incarnation)` holds.
  std::vector<ThreadMark> MarksOf(const std::function<bool(uint32_t node, uint64_t incarnation)>& gone) const;
  size_t truncation_tombstones() const { return truncated_.size(); }
  // Recovery's decision for `id`. Commit: installs it where it holds locks, marks a backup record
  // committed (applied at Forget). Abort: releases its locks, drops a backup record, and keeps a
  // tombstone so a later recovery decides the same. FailedPrecondition if it contradicts what is held
  // here (installed or truncated, or an abort's tombstone); nothing held is fine (another holder's part).
  absl::Status Resolve(const TxnId& id, bool commit);
  // After every holder took the decision: a committed backup record is applied and forgotten, an
  // installed primary entry or a tombstone (abort or truncation) forgotten. FailedPrecondition if it is
  // still undecided here.
  absl::Status Forget(const TxnId& id);

  // Records kept (locked, committed but not truncated, or backup records not applied).
  size_t log_entries() const { return primary_log_.size() + backup_log_.size(); }
  const ParticipantStats& stats() const { return stats_; }
  void CountRefusedOfGone() { ++stats_.records_of_gone_refused; }
  // What it holds, for diagnosing a stall (Node::Describe): counts, and the oldest transactions that
  // still hold locks here with the regions they lock.
  std::string Describe() const;

 private:
  using Key = TxnKey;  // the whole id (records.h)
  struct PrimaryEntry {
    Record record;
    std::vector<uint64_t> locked;  // version locked, per entry
    bool committed = false;
  };
  // Unlocks what a LOCK locked and releases its log epoch (an ABORT, or a removal).
  void UndoLock(const PrimaryEntry& held);
  void ApplyBackup(const Record& record);
  // Forgets what is held of `key` (applying a backup record first); true if anything was.
  bool DropHeld(const Key& key);
  using TombstoneKey = std::tuple<uint32_t, uint16_t, uint64_t, uint64_t>;  // node, thread, counter, epoch
  static TombstoneKey TombstoneOf(const TxnId& id) { return {id.node, id.thread, id.counter, id.epoch}; }

  object::ObjectStore* store_;
  memory::SlabAllocator* allocator_;
  BackupStore* backups_;
  std::function<uint64_t(uint32_t)> region_bytes_;
  absl::flat_hash_map<Key, PrimaryEntry> primary_log_;
  absl::flat_hash_map<Key, Record> backup_log_;
  // Recovery's decisions, kept until Forget: backup records it committed, transactions it aborted here.
  absl::flat_hash_set<Key> recovered_commits_;
  absl::flat_hash_map<Key, TxnId> recovered_aborts_;
  // Transactions truncated here, until their coordinator's mark settles them (or recovery forgets them):
  // recovery must tell "applied and forgotten" from "never received" (recovery_decision.h). Tombstones of
  // a coordinator that is gone and that no recovery round finds (it held nothing elsewhere) stay.
  absl::btree_set<TombstoneKey> truncated_;
  // By (node, thread): one mark per incarnation, sorted (SettledBy), the newest kMaxIncarnationsKept.
  static constexpr size_t kMaxIncarnationsKept = 16;
  absl::flat_hash_map<std::pair<uint32_t, uint16_t>, std::vector<CoordinatorMark>> marks_;
  struct Reservation {
    object::ObjectRef ref;
    uint32_t coordinator = 0;
    uint64_t epoch = 0;
  };
  absl::flat_hash_map<uint64_t, Reservation> reserved_;  // by raw address
  ParticipantStats stats_;
  InstallObserver on_install_;
  LogEpochs* epochs_ = nullptr;
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_PARTICIPANT_H_
