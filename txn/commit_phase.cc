// Commit, COMMIT-BACKUP and COMMIT-PRIMARY (and ABORT): the records that make the transaction durable in
// f+1 memories and then visible, and the truncation that follows.
#include "absl/strings/str_cat.h"
#include "txn/commit.h"

namespace fathom::txn {

void CommitOperation::CommitBackups() {
  // Wait for the fabric to complete every COMMIT-BACKUP write (the record is in the backup's memory), not
  // for the backup's CPU, which applies it only at truncation.
  outstanding_ = backups_.size();
  first_error_ = absl::OkStatus();
  if (outstanding_ == 0) return AfterBackups();
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
  AfterBackups();
}

void CommitOperation::CommitPrimaries() {
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
    // known here.
    return Finish(absl::UnavailableError(
        absl::StrCat("COMMIT-PRIMARY reached no primary (", first_error_.message(), "); outcome unknown")));
  }
  // Every primary has its record: the replicas may forget the transaction (lazily).
  const absl::Time now = thread_.clock().Now();
  for (auto* replicas : {&primaries_, &backups_}) {
    for (Replica& r : *replicas) {
      if (r.local) {
        const uint64_t counter = id_.counter;
        thread_.participant().Truncate(id_.node, id_.thread, {&counter, 1});
      } else {
        thread_.truncator().Add(r.node, id_.counter, now);
      }
    }
  }
  ReleaseLogRoom();  // the ABORT room nobody needed
}

void CommitOperation::AbortAll(absl::Status why) {
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

}  // namespace fathom::txn
