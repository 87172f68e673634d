// Commit, COMMIT-BACKUP and COMMIT-PRIMARY (and ABORT): the records that make the transaction durable in
// f+1 memories and then visible, and the truncation that follows.
#include "absl/strings/str_cat.h"
#include "txn/commit.h"

namespace fathom::txn {

void CommitOperation::CommitBackups() {
  // Wait for the fabric to complete every COMMIT-BACKUP write (the record is in the backup's memory), not
  // for the backup's CPU, which applies it only at truncation.
  Step("commit_backup");
  outstanding_ = backups_.size();
  first_error_ = absl::OkStatus();
  if (outstanding_ == 0) return CommitPrimaries();
  auto self = shared_from_this();
  for (Replica& b : backups_) {
    b.sent = true;
    if (b.local) {
      OnBackupWritten(thread_.participant().CommitBackup(RecordFor(RecordKind::kCommitBackup, b, true)));
      continue;
    }
    ++thread_.stats().commit_backup_messages;
    msg::SendOptions options;
    options.set_aside = &b.set_aside;
    options.on_written = [self](absl::Status s) { self->OnBackupWritten(s); };
    if (absl::Status s =
            thread_.messenger().Send(b.node, kCommitBackupMessage, EncodeFor(RecordKind::kCommitBackup, b),
                                     std::move(options));
        !s.ok()) {
      OnBackupWritten(s);
    }
  }
  thread_.messenger().Flush().IgnoreError();  // a failure reaches the callbacks
}

void CommitOperation::OnBackupWritten(absl::Status status) {
  if (!status.ok() && first_error_.ok()) {
    first_error_ = absl::UnavailableError(absl::StrCat("COMMIT-BACKUP: ", status.message()));
  }
  if (--outstanding_ > 0) return;
  // Nothing is visible yet and the primaries still hold their locks: a backup that cannot be reached
  // (recovery will reconfigure) makes this transaction abort.
  if (!first_error_.ok()) return AbortAll(first_error_);
  CommitPrimaries();
}

void CommitOperation::CommitPrimaries() {
  Step("commit_primary");
  outstanding_ = primaries_.size();
  first_error_ = absl::OkStatus();
  auto self = shared_from_this();
  for (Replica& p : primaries_) {
    if (p.local) {
      OnPrimaryWritten(thread_.participant().CommitPrimary(id_));
      continue;
    }
    ++thread_.stats().commit_primary_messages;
    msg::SendOptions options;
    options.set_aside = &p.set_aside;
    options.on_written = [self](absl::Status s) { self->OnPrimaryWritten(s); };
    if (absl::Status s = thread_.messenger().Send(p.node, kCommitPrimaryMessage,
                                                  EncodeFor(RecordKind::kCommitPrimary, p), std::move(options));
        !s.ok()) {
      OnPrimaryWritten(s);
    }
  }
  thread_.messenger().Flush().IgnoreError();
}

void CommitOperation::OnPrimaryWritten(absl::Status status) {
  if (status.ok()) {
    // Every backup holds the records and one primary has its COMMIT-PRIMARY: committed (FaRM reports
    // success at the first primary's acknowledgement).
    Finish(absl::OkStatus());
  } else if (first_error_.ok()) {
    first_error_ = status;
  }
  if (--outstanding_ > 0) return;
  if (!finished_) {
    // No primary took its record; the backups hold it, so recovery would commit it: the outcome is not
    // known here. Nothing more goes out: the room set aside for ABORTs goes back.
    ReleaseLogRoom();
    return Finish(absl::UnavailableError(
        absl::StrCat("COMMIT-PRIMARY reached no primary (", first_error_.message(), "); outcome unknown")));
  }
  if (!first_error_.ok()) {
    // Committed (a primary has its record), but a primary that did not take its COMMIT-PRIMARY still holds
    // its locks, and the backups' records are what recovery commits its objects from: no replica may
    // forget the transaction (FaRM truncates only once every primary acknowledged).
    Step("truncate_withheld");
    ReleaseLogRoom();
    return;
  }
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
  ReleaseLogRoom();  // the ABORT room nobody needed
}

void CommitOperation::AbortAll(absl::Status why) {
  Step("abort");
  // ABORT to every primary that may hold locks and every backup that may hold a record; the room for it
  // was set aside before LOCK, so these never fail for lack of space.
  for (Replica& p : primaries_) {
    if (!p.sent || p.refused) continue;
    if (p.local) {
      thread_.participant().Abort(id_);
      continue;
    }
    ++thread_.stats().abort_messages;
    msg::SendOptions options;
    options.set_aside = &p.set_aside;
    thread_.messenger().Send(p.node, kAbortMessage, EncodeFor(RecordKind::kAbort, p), std::move(options)).IgnoreError();
  }
  for (Replica& b : backups_) {
    if (!b.sent) continue;
    if (b.local) {
      thread_.participant().Abort(id_);
      continue;
    }
    ++thread_.stats().abort_messages;
    msg::SendOptions options;
    options.set_aside = &b.set_aside;
    thread_.messenger().Send(b.node, kAbortMessage, EncodeFor(RecordKind::kAbort, b), std::move(options)).IgnoreError();
  }
  thread_.messenger().Flush().IgnoreError();
  ReleaseLogRoom();
  thread_.ReleaseReservations(*tx_);
  Finish(why);
}

void CommitOperation::Finish(absl::Status status) {
  if (finished_) return;
  finished_ = true;
  if (status.ok() && sync_) {
    if (thread_.log_epochs() == nullptr || log_epoch_ == 0) {
      status = absl::FailedPreconditionError(absl::StrCat(
          id_.ToString(), " committed, but sync durability needs log epochs (the SSD log on every node); it is "
          "not known to be durable"));
    } else if (thread_.log_epochs()->durable() < log_epoch_) {
      ++thread_.stats().sync_waits;
      thread_.log_epochs()->RequestClose(log_epoch_);
      return WaitDurable(thread_.clock().Now() + thread_.options().sync_timeout);
    }
  }
  CoordinatorStats& stats = thread_.stats();
  if (status.ok()) {
    ++stats.committed;
  } else if (absl::IsAborted(status)) {
    ++stats.aborted;
  } else {
    ++stats.failed;
  }
  DoneCallback done = std::move(done_);
  done(std::move(status));
}

void CommitOperation::WaitDurable(absl::Time give_up) {
  finished_ = true;  // whatever comes now reports nothing more
  const uint64_t durable = thread_.log_epochs()->durable();
  if (durable >= log_epoch_ || thread_.clock().Now() >= give_up) {
    ++(durable >= log_epoch_ ? thread_.stats().committed : thread_.stats().failed);
    DoneCallback done = std::move(done_);
    if (durable >= log_epoch_) return done(absl::OkStatus());
    return done(absl::DeadlineExceededError(absl::StrCat(
        id_.ToString(), " committed in log epoch ", log_epoch_, ", which is not durable after ",
        absl::FormatDuration(thread_.options().sync_timeout), " (every member's SSD log has epochs up to ", durable,
        "); it becomes durable when the logs catch up")));
  }
  auto self = shared_from_this();
  thread_.After(thread_.options().sync_poll_interval, [self, give_up] { self->WaitDurable(give_up); });
}

}  // namespace fathom::txn
