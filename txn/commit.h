// CommitOperation: FaRM's commit protocol (SOSP'15) for one transaction, driven by its coordinator
// thread's event loop. One file per phase:
//   commit_plan.cc      which primaries and backups get which records; log room set aside up front, so a
//                       commit never stops half way for lack of log space;
//   lock_phase.cc       LOCK records to the primaries of written objects; they lock with a CPU CAS;
//   validate_phase.cc   one-sided re-reads of objects read but not written (version unchanged, unlocked);
//   commit_phase.cc     COMMIT-BACKUP to every backup, waiting for the fabric's completions (not the backups'
//                       CPUs), then COMMIT-PRIMARY to every primary; the caller hears OK at the first
//                       completion; then the ids are owed to the replicas for truncation; ABORT on failure.
//                       A COMMIT-PRIMARY or ABORT that a member replica did not get goes again until it does;
//                       a COMMIT-BACKUP too, for an RPC timeout after its write failed (then it aborts).
// Read-only transactions skip LOCK and the commit records: they validate (if they read more than one
// object) and are done.
#ifndef FATHOM_TXN_COMMIT_H_
#define FATHOM_TXN_COMMIT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "txn/records.h"
#include "txn/tx_state.h"
#include "txn/txn_thread.h"

namespace fathom::txn {

class CommitOperation : public std::enable_shared_from_this<CommitOperation> {
 public:
  // `sync`: Durability::kSync, `done` hears OK only once the transaction's log epoch is durable.
  static void Start(TxnThread& thread, std::shared_ptr<TxState> tx, bool sync, DoneCallback done);

  CommitOperation(TxnThread& thread, std::shared_ptr<TxState> tx, bool sync, DoneCallback done)
      : thread_(thread), tx_(std::move(tx)), done_(std::move(done)), sync_(sync) {}

  // The records one replica gets.
  struct Replica {
    uint32_t node = 0;
    bool local = false;
    std::vector<size_t> entries;      // indices into writes_
    uint64_t set_aside = 0;            // ring room for the records still to come (remote only)...
    const msg::RingSender* room_in = nullptr;  // ...in this connection's ring (RoomFor)
    std::vector<uint64_t> truncated;   // ids piggybacked on the next record (remote only)
    std::vector<uint64_t> locked;      // primaries: versions locked, per entry
    bool sent = false;                 // a LOCK (primary) or COMMIT-BACKUP (backup) went out: it may be kept
    bool refused = false;              // primaries: the LOCK was answered with an error (nothing locked)
    bool written = false;              // primaries: COMMIT-PRIMARY is in its memory
    std::vector<uint64_t> piggybacked; // the ids the last encoded record carried (a resent COMMIT-BACKUP again)
  };


 private:
  // commit_plan.cc
  absl::Status Plan();
  // OK while the node's map still names every replica the plan did (the map may have changed since):
  // else a COMMIT-BACKUP must not go out (a backup promoted since serves the region without the locks
  // this transaction holds at its old primary: node/config_applied.h). Unavailable says which region.
  absl::Status PlanStillHolds();
  absl::Status SetAsideLogRoom();
  void ReleaseLogRoom();
  // A record for this node's own participant (it keeps the entries: a copy).
  Record RecordFor(RecordKind kind, Replica& replica, bool with_entries);
  // A remote record, encoded straight from writes_ (the piggybacked ids move into it).
  std::string EncodeFor(RecordKind kind, Replica& replica);
  std::vector<const WriteEntry*> EntriesOf(const Replica& replica) const;
  // The replica's set-aside room for SendOptions::set_aside, or null if the connection it was set aside in
  // has been replaced since (the room went with it; the new ring never had it).
  uint64_t* RoomFor(Replica& replica);
  // lock_phase.cc
  // Tells TxnOptions::on_step that the commit reached `step`.
  void Step(std::string_view step) {
    if (thread_.options().on_step) thread_.options().on_step(step);
  }
  void Lock();
  void SendLocks();
  void OnLockReply(size_t primary, absl::StatusOr<LockGrant> versions);
  // A primary refused because a log epoch was closing: unlock, and LOCK again shortly with a new id.
  void LockAgainLater();
  static constexpr absl::Duration kEpochRetryDelay = absl::Microseconds(50);
  // validate_phase.cc
  void Validate();
  void ValidateReadOnly();
  void OnValidated(absl::Status status);
  // commit_phase.cc
  void CommitBackups();
  void SendCommitBackups();
  // `resent`: the outcome of TxnThread::SendUntilWritten after a first write failed (final).
  void OnBackupWritten(size_t backup, absl::Status status, bool resent = false);
  // A COMMIT-BACKUP that was written was discarded unread with its connection (msg::SendOptions::on_lost).
  void OnBackupLost(size_t backup);
  void CommitPrimaries();
  void SendCommitPrimaries();
  void OnPrimaryWritten(size_t primary, absl::Status status);
  // A COMMIT-PRIMARY sent again (TxnThread::SendUntilWritten) was written, or its primary left.
  void OnPrimaryResent(size_t primary, bool written);
  // Owes every replica the truncation of this transaction (every primary has its COMMIT-PRIMARY).
  void Truncate();
  // ABORT to a remote replica, into the room set aside, and again until written while it is a member;
  // `written` (if set) once the first write is in the replica's memory or failed.
  // `settled` (if set) runs once the ABORT is written into the replica's memory (or the replica left).
  void SendAbort(Replica& replica, std::function<void()> written, std::function<void()> settled);
  // A callback that settles this transaction at the thread (TxnThread::Settle) on its `pending`th call.
  std::function<void()> SettleOnce(int pending);
  // ABORT to the backups, then (OnBackupAborted, once all are written) to the primaries; then Finish(why).
  // The ABORTs go once the lease allows (WhenLeased).
  void AbortAll(absl::Status why);
  void SendAborts();
  // lease_wait.cc
  // Every step that sends records (LOCK, COMMIT-BACKUP, COMMIT-PRIMARY, ABORT) starts here. A coordinator
  // whose lease lapsed may have been removed, and a member that has not fenced the removal yet keeps a
  // record that the members that did refuse (issue 58, nightly seed 2461: half a transfer installed, a
  // primary ahead of its backups). `phase` runs at once while the lease runs in the term the commit began
  // in. After a lapse the caller hears Unavailable at once, and the commit waits: once the lease runs
  // again and this node applied the configuration it was granted in (where an admission again it has
  // yet to see shows), COMMIT-PRIMARY and ABORT go on and earlier phases abort; if this node was removed
  // meanwhile, nothing more is sent (recovery decides).
  void WhenLeased(void (CommitOperation::*phase)());
  bool LeaseLapsed() const;
  void OnBackupAborted();
  void Finish(absl::Status status);
  // Sync durability: OK once log_epoch_ is durable on every member, DeadlineExceeded at `give_up`.
  void WaitDurable(absl::Time give_up);

  TxnThread& thread_;
  std::shared_ptr<TxState> tx_;
  DoneCallback done_;
  const bool sync_;
  absl::Time started_;  // when Start ran: the commit latency (CoordinatorStats::commit_latency)
  uint64_t log_epoch_ = 0;    // the primaries granted the locks in it (0: no log epochs)
  size_t lock_replies_ = 0;   // granted
  absl::Time epoch_retry_deadline_ = absl::InfinitePast();  // set at the first refusal
  TxnId id_;
  uint64_t plan_epoch_ = 0;  // of the map Plan() used
  uint64_t lease_term_ = 0;  // TxnOptions::lease_term when the commit began
  std::vector<WriteEntry> writes_;    // lock-record entries, in address order
  std::vector<uint32_t> written_regions_;  // the regions of writes_ (in every LOCK and COMMIT-BACKUP record)
  std::vector<Replica> primaries_;
  std::vector<Replica> backups_;
  std::vector<ReadEntry> to_validate_;
  size_t outstanding_ = 0;
  absl::Status first_error_;
  bool finished_ = false;
  size_t resending_ = 0;  // COMMIT-PRIMARY records being sent again
  bool gave_up_ = false;  // a primary left before its COMMIT-PRIMARY was written: never truncated here
  bool phase_failed_ = false;
  AbortReason phase_ = AbortReason::kPlan;  // an Aborted outcome's reason: the phase it ended in
  bool primaries_started_ = false;  // COMMIT-PRIMARY went out: committed
  bool aborting_ = false;           // AbortAll ran
  absl::Status abort_status_;  // what AbortAll reports once the ABORTs are out
  size_t backup_aborts_ = 0;   // backup ABORTs not yet written
  std::function<void()> abort_settled_;  // AbortAll: SettleOnce over every ABORT
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_COMMIT_H_
