// Commit, COMMIT-BACKUP and COMMIT-PRIMARY (and ABORT): the records that make the transaction durable in
// f+1 memories and then visible, and the truncation that follows.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "txn/commit.h"
#include "txn/outcome.h"

namespace fathom::txn {

void CommitOperation::CommitBackups() {
  // Wait for the fabric to complete every COMMIT-BACKUP write (the record is in the backup's memory), not
  // for the backup's CPU, which applies it only at truncation.
  Step("commit_backup");
  phase_ = AbortReason::kCommit;
  WhenLeased(&CommitOperation::SendCommitBackups);
}

void CommitOperation::SendCommitBackups() {
  if (absl::Status holds = PlanStillHolds(); !holds.ok()) return AbortAll(holds);
  outstanding_ = backups_.size();
  first_error_ = absl::OkStatus();
  if (outstanding_ == 0) return CommitPrimaries();
  auto self = shared_from_this();
  for (size_t i = 0; i < backups_.size(); ++i) {
    Replica& b = backups_[i];
    b.sent = true;
    if (b.local) {
      OnBackupWritten(i, thread_.participant().CommitBackup(RecordFor(RecordKind::kCommitBackup, b, true)));
      continue;
    }
    ++thread_.stats().commit_backup_messages;
    msg::SendOptions options;
    options.set_aside = RoomFor(b);
    options.wake = msg::Wake::kWhenAwake;  // the commit waits for the write's completion, not the backup's CPU
    options.on_written = [self, i](absl::Status s) { self->OnBackupWritten(i, s); };
    options.on_lost = [self, i](absl::Status) { self->OnBackupLost(i); };
    if (absl::Status s =
            thread_.messenger().Send(b.node, kCommitBackupMessage, EncodeFor(RecordKind::kCommitBackup, b),
                                     std::move(options));
        !s.ok()) {
      OnBackupWritten(i, s);
    }
  }
  thread_.messenger().Flush().IgnoreError();  // a failure reaches the callbacks
}

void CommitOperation::OnBackupWritten(size_t backup, absl::Status status, bool resent) {
  Replica& b = backups_[backup];
  if (!status.ok() && !resent && !b.local && thread_.replicas().IsMember(b.node)) {
    // A backup that is still a member gets its record again (its connection is made again meanwhile), for
    // up to the commit's RPC timeout from this failure: aborting with the record in some backups is what
    // recovery cannot undo once it exists, so it is the last resort.
    b.truncated = std::move(b.piggybacked);
    auto self = shared_from_this();
    const uint32_t node = b.node;
    thread_.SendUntilWritten(
        node, kCommitBackupMessage, EncodeFor(RecordKind::kCommitBackup, b),
        [self, backup, node, why = status](bool written) {
          self->OnBackupWritten(backup,
                                written ? absl::OkStatus()
                                        : absl::UnavailableError(absl::StrCat(
                                              "node ", node, " left, is no longer the planned backup, or its "
                                              "record was not written in time (first: ",
                                              why.message(), ")")),
                                /*resent=*/true);
        },
        thread_.clock().Now() + thread_.options().rpc_timeout, [self, backup] { self->OnBackupLost(backup); },
        [self] { return self->PlanStillHolds().ok(); });
    return;
  }
  if (!status.ok() && first_error_.ok()) {
    first_error_ = absl::UnavailableError(absl::StrCat("COMMIT-BACKUP: ", status.message()));
  }
  if (--outstanding_ > 0) return;
  // Nothing is visible yet and the primaries still hold their locks: a backup that cannot be reached
  // (recovery will reconfigure) makes this transaction abort.
  if (!first_error_.ok()) return AbortAll(first_error_);
  CommitPrimaries();
}

void CommitOperation::OnBackupLost(size_t backup) {
  // The record was written but the backup dropped the connection before it consumed it (it discards
  // what it had not read): it may not hold the record. What it needs depends on the decision.
  Replica& b = backups_[backup];
  if (aborting_) return;  // the ABORT that follows the record goes to it (again if lost) and drops any copy
  if (!primaries_started_) {
    // Still counting copies: this one is not made yet. Written again (as after a failed write) before
    // any COMMIT-PRIMARY goes out.
    ++outstanding_;
    return OnBackupWritten(backup, absl::UnavailableError(absl::StrCat(
                                       "node ", b.node, " dropped the connection before it read COMMIT-BACKUP")));
  }
  // Committed: the backup gets the record again and then its truncation (it applies it then; a copy of a
  // state it already has is skipped, backup_store.h).
  b.truncated = b.piggybacked;
  thread_.Redeliver(b.node, kCommitBackupMessage, EncodeFor(RecordKind::kCommitBackup, b), id_)();
}

void CommitOperation::CommitPrimaries() {
  Step("commit_primary");
  WhenLeased(&CommitOperation::SendCommitPrimaries);
}

void CommitOperation::SendCommitPrimaries() {
  primaries_started_ = true;
  thread_.Settle(id_.counter);  // every backup holds its record: committed, whatever happens next
  outstanding_ = primaries_.size();
  first_error_ = absl::OkStatus();
  auto self = shared_from_this();
  for (size_t i = 0; i < primaries_.size(); ++i) {
    Replica& p = primaries_[i];
    if (p.local) {
      OnPrimaryWritten(i, thread_.participant().CommitPrimary(id_));
      continue;
    }
    ++thread_.stats().commit_primary_messages;
    std::string record = EncodeFor(RecordKind::kCommitPrimary, p);
    msg::SendOptions options;
    options.set_aside = RoomFor(p);
    // Committed once written (FaRM reports then), so nothing waits on the primary's CPU now; its locks do,
    // soon: the doorbell rides with the next message that wakes it anyway, or rings within
    // MessengerOptions::owed_wake_delay (a second wake-up per update saved under load).
    options.wake = msg::Wake::kSoon;
    options.on_written = [self, i](absl::Status s) { self->OnPrimaryWritten(i, s); };
    // Written, then discarded unread with its connection: the primary may still hold the locks. (The
    // redelivery is made only then: this runs for every commit.)
    options.on_lost = [thread = &thread_, node = p.node, copy = record, id = id_](absl::Status) mutable {
      thread->Redeliver(node, kCommitPrimaryAgainMessage, std::move(copy), id)();
    };
    if (absl::Status s = thread_.messenger().Send(p.node, kCommitPrimaryMessage, record, std::move(options));
        !s.ok()) {
      OnPrimaryWritten(i, s);
    }
  }
  thread_.messenger().Flush().IgnoreError();
}

void CommitOperation::OnPrimaryWritten(size_t primary, absl::Status status) {
  if (status.ok()) {
    primaries_[primary].written = true;
    // Every backup holds the records and one primary has its COMMIT-PRIMARY: committed (FaRM reports
    // success at the first primary's acknowledgement).
    Finish(absl::OkStatus());
  } else if (first_error_.ok()) {
    first_error_ = status;
  }
  if (--outstanding_ > 0) return;
  // What was set aside for ABORTs is not needed: every backup holds COMMIT-BACKUP, so the transaction
  // commits whatever happens next.
  ReleaseLogRoom();
  if (!finished_) {
    // No primary has its record yet; the backups hold theirs, so it commits (below, or by recovery), but
    // when is not known here.
    Finish(MayHaveCommittedError(absl::UnavailableError(
        absl::StrCat("COMMIT-PRIMARY reached no primary (", first_error_.message(), "); outcome unknown"))));
  }
  if (first_error_.ok()) return Truncate();
  // A primary that did not take its COMMIT-PRIMARY still holds its locks, and the backups' records are
  // what commits its objects: no replica may forget the transaction (FaRM truncates only once every
  // primary acknowledged). The record goes again while that primary is a member (its connection is made
  // again meanwhile); one that left is recovery's.
  Step("truncate_withheld");
  for (size_t i = 0; i < primaries_.size(); ++i) {
    Replica& p = primaries_[i];
    if (p.written) continue;
    if (p.local) {
      gave_up_ = true;  // our own participant refused it: nothing to send again
      continue;
    }
    ++resending_;
    auto self = shared_from_this();
    std::string record = EncodeFor(RecordKind::kCommitPrimary, p);
    std::function<void()> if_lost = thread_.Redeliver(p.node, kCommitPrimaryAgainMessage, record, id_);
    thread_.SendUntilWritten(
        p.node, kCommitPrimaryMessage, std::move(record), [self, i](bool written) { self->OnPrimaryResent(i, written); },
        absl::InfiniteFuture(), std::move(if_lost));
  }
}

void CommitOperation::OnPrimaryResent(size_t primary, bool written) {
  if (written) {
    primaries_[primary].written = true;
    Finish(absl::OkStatus());  // if nothing was reported yet; else a no-op
  }
  // Not written: the primary left the configuration, its locks with it. Every backup holds COMMIT-BACKUP,
  // so the transaction is committed: the backup promoted in its place installs it when the truncation
  // reaches it (docs/recovery.md), and serves the region only after that.
  if (--resending_ > 0 || gave_up_) return;
  Truncate();
}

void CommitOperation::Truncate() {
  // Every primary has its record: the replicas may forget the transaction (lazily).
  Step("truncate");
  const absl::Time now = thread_.clock().Now();
  for (auto* replicas : {&primaries_, &backups_}) {
    for (Replica& r : *replicas) {
      if (r.local) {
        const uint64_t counter = id_.counter;
        thread_.participant().Truncate(id_.epoch, id_.node, id_.thread, {&counter, 1});
      } else {
        thread_.truncator().Add(r.node, id_.epoch, id_.counter, now);
      }
    }
  }
}

std::function<void()> CommitOperation::SettleOnce(int pending) {
  // Settles this transaction when it has run `pending` times (shared by the calls it is copied into).
  auto left = std::make_shared<int>(pending);
  return [thread = &thread_, counter = id_.counter, left] {
    if (--*left == 0) thread->Settle(counter);
  };
}

void CommitOperation::SendAbort(Replica& replica, std::function<void()> written, std::function<void()> settled) {
  ++thread_.stats().abort_messages;
  std::string record = EncodeFor(RecordKind::kAbort, replica);
  // An ABORT that does not reach a member replica is sent again: until it arrives, that replica keeps the
  // transaction's locks (a primary) or its record (a backup).
  TxnThread* thread = &thread_;
  const uint32_t node = replica.node;
  // A copy that was written but discarded unread with its connection goes again too (ABORT of a
  // transaction a replica no longer knows is ignored).
  std::function<void()> if_lost = thread_.Redeliver(node, kAbortMessage, record);
  // Written (or the replica left, its copy with it): settled as far as this replica goes.
  auto again = [thread, node, if_lost, settled](std::string bytes) {
    thread->SendUntilWritten(
        node, kAbortMessage, std::move(bytes), [settled](bool) { if (settled) settled(); }, absl::InfiniteFuture(),
        if_lost);
  };
  msg::SendOptions options;
  options.set_aside = RoomFor(replica);
  options.on_written = [again, written, settled, record](absl::Status status) {
    if (!status.ok()) {
      again(record);
    } else if (settled) {
      settled();
    }
    if (written) written();
  };
  options.on_lost = [if_lost](absl::Status) { if_lost(); };
  if (absl::Status s = thread_.messenger().Send(node, kAbortMessage, record, std::move(options)); !s.ok()) {
    again(std::move(record));
    if (written) written();
  }
}

void CommitOperation::AbortAll(absl::Status why) {
  abort_status_ = std::move(why);
  WhenLeased(&CommitOperation::SendAborts);
}

void CommitOperation::SendAborts() {
  Step("abort");
  // ABORT to every backup that may hold a record first, and to the primaries only once each of those is in
  // its backup's memory: if this coordinator dies meanwhile, recovery finds no record whose primaries have
  // already released the transaction (it would take that for a commit being truncated) — records of an
  // abort go before its locks. A backup whose write fails does not hold the primaries' locks: its ABORT
  // goes again in the background while it stays a member (a dead backup's record goes with it). The room
  // for every ABORT was set aside before LOCK, so none fails for lack of space.
  aborting_ = true;
  backup_aborts_ = 1;  // until every backup's ABORT is out
  // Settled once every ABORT, to backups and primaries, is written (+ 1 until the primaries' are out).
  // Every LOCK reply is in by now, so which replicas get one is known.
  int remote = 1;
  for (auto* replicas : {&primaries_, &backups_}) {
    for (const Replica& r : *replicas) remote += r.sent && !r.refused && !r.local;
  }
  abort_settled_ = SettleOnce(remote);
  auto self = shared_from_this();
  for (Replica& b : backups_) {
    if (!b.sent) continue;
    if (b.local) {
      thread_.participant().Abort(id_);
      continue;
    }
    ++backup_aborts_;
    SendAbort(b, [self] { self->OnBackupAborted(); }, abort_settled_);
  }
  thread_.messenger().Flush().IgnoreError();
  OnBackupAborted();
}

void CommitOperation::OnBackupAborted() {
  if (--backup_aborts_ > 0) return;
  for (Replica& p : primaries_) {
    if (!p.sent || p.refused) continue;
    if (p.local) {
      thread_.participant().Abort(id_);
      continue;
    }
    SendAbort(p, nullptr, abort_settled_);
  }
  thread_.messenger().Flush().IgnoreError();
  abort_settled_();
  ReleaseLogRoom();
  thread_.ReleaseReservations(*tx_);
  Finish(abort_status_);
}

void CommitOperation::Finish(absl::Status status) {
  if (finished_) return;
  finished_ = true;
  // Removed and admitted again since it began, a coordinator no longer decides its transaction (recovery
  // does): as for a lapsed lease, its success is not its to report.
  const bool lapsed = (thread_.options().lease_lapsed && thread_.options().lease_lapsed()) ||
                      thread_.AdmittedAgainSince(id_.epoch);
  if (status.ok() && lapsed) {
    // A record written after the members drained this node never counts, and reads may be of regions
    // that moved (FaRM: a coordinator without a lease stops); recovery decides, so success is not ours.
    status = absl::UnavailableError(absl::StrCat(
        id_.ToString(), ": outcome unknown, this node's lease lapsed (or it was removed and admitted again) before "
        "its commit was acknowledged (recovery then decides its writes, and its reads may be stale)"));
    if (!primaries_.empty()) status = MayHaveCommittedError(std::move(status));
  } else if (!status.ok() && lapsed &&
             std::any_of(backups_.begin(), backups_.end(), [](const Replica& b) { return b.sent && !b.local; })) {
    // An abort after COMMIT-BACKUP is this coordinator's decision while it is a member (recovery decides
    // only for coordinators that are gone); without a lease it may have been removed, and recovery may
    // find a backup's record and commit (docs/recovery.md §5).
    status = MayHaveCommittedError(std::move(status));
  }
  if (status.ok() && sync_) {
    if (thread_.log_epochs() == nullptr || log_epoch_ == 0) {
      status = MayHaveCommittedError(absl::FailedPreconditionError(absl::StrCat(
          id_.ToString(), " committed, but sync durability needs log epochs (the SSD log on every node); it is "
          "not known to be durable")));
    } else if (thread_.log_epochs()->durable() < log_epoch_) {
      ++thread_.stats().sync_waits;
      thread_.log_epochs()->RequestClose(log_epoch_);
      return WaitDurable(thread_.clock().Now() + thread_.options().sync_timeout);
    }
  }
  CoordinatorStats& stats = thread_.stats();
  if (status.ok()) {
    ++stats.committed;
    stats.commit_latency.Record(thread_.clock().Now() - started_);
  } else {
    stats.CountAbort(AbortReasonOf(status, phase_));
  }
  DoneCallback done = std::move(done_);
  done(std::move(status));
}

void CommitOperation::WaitDurable(absl::Time give_up) {
  finished_ = true;  // whatever comes now reports nothing more
  const uint64_t durable = thread_.log_epochs()->durable();
  if (durable >= log_epoch_ || thread_.clock().Now() >= give_up) {
    DoneCallback done = std::move(done_);
    if (durable >= log_epoch_) {
      ++thread_.stats().committed;
      thread_.stats().commit_latency.Record(thread_.clock().Now() - started_);
      return done(absl::OkStatus());
    }
    thread_.stats().CountAbort(AbortReason::kDeadlineExceeded);
    return done(MayHaveCommittedError(absl::DeadlineExceededError(absl::StrCat(
        id_.ToString(), " committed in log epoch ", log_epoch_, ", which is not durable after ",
        absl::FormatDuration(thread_.options().sync_timeout), " (every member's SSD log has epochs up to ", durable,
        "); it becomes durable when the logs catch up"))));
  }
  auto self = shared_from_this();
  thread_.After(thread_.options().sync_poll_interval, [self, give_up] { self->WaitDurable(give_up); });
}

}  // namespace fathom::txn
