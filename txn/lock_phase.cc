// Commit, LOCK: a lock record to the primary of every written object; each primary locks its objects with
// a CPU compare-and-swap, checking the versions the transaction read, and answers with the versions locked.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "txn/commit.h"

namespace fathom::txn {
namespace {

// What the application hears when a primary does not grant the locks.
absl::Status LockFailure(uint32_t node, const absl::Status& status) {
  if (absl::IsAborted(status)) return status;
  if (absl::IsDeadlineExceeded(status) || absl::IsUnavailable(status) || absl::IsCancelled(status)) {
    return absl::UnavailableError(absl::StrCat("LOCK at node ", node, ": ", status.message()));
  }
  if (absl::IsResourceExhausted(status)) return absl::AbortedError(absl::StrCat("LOCK at node ", node, ": log full"));
  return status;
}

}  // namespace

void CommitOperation::Lock() {
  Step("lock");
  phase_ = AbortReason::kLock;
  WhenLeased(&CommitOperation::SendLocks);
}

void CommitOperation::SendLocks() {
  outstanding_ = primaries_.size();
  auto self = shared_from_this();
  for (size_t i = 0; i < primaries_.size(); ++i) {
    Replica& p = primaries_[i];
    if (p.local) {
      p.sent = true;
      // As a remote primary checks (txn_thread.cc): a transaction planned in an older configuration may
      // miss a backup added since (data recovery copies only what such transactions left behind).
      if (id_.epoch != thread_.replicas().epoch()) {
        OnLockReply(i, absl::AbortedError(absl::StrCat(id_.ToString(), " is from another configuration (now ",
                                                       thread_.replicas().epoch(), ")")));
        continue;
      }
      OnLockReply(i, thread_.participant().Lock(RecordFor(RecordKind::kLock, p, true)));
      continue;
    }
    p.truncated = thread_.truncator().Take(p.node, id_.epoch, 256);
    const std::string record = EncodeFor(RecordKind::kLock, p);  // the ids move to p.piggybacked
    ++thread_.stats().lock_messages;
    absl::Status posted = thread_.messenger().Call(
        p.node, kLockMessage, record, thread_.options().rpc_timeout,
        [self, i](absl::StatusOr<std::string_view> reply) {
          if (!reply.ok()) {
            // No answer: the record (and the truncations it carried) may not have been read. Those ids
            // are owed again; a replica that did read them ignores them the second time.
            const absl::StatusCode code = reply.status().code();
            if (code == absl::StatusCode::kCancelled || code == absl::StatusCode::kUnavailable ||
                code == absl::StatusCode::kDeadlineExceeded) {
              const Replica& p = self->primaries_[i];
              self->thread_.truncator().PutBack(p.node, self->id_.epoch, p.piggybacked, self->thread_.clock().Now());
            }
            return self->OnLockReply(i, reply.status());
          }
          self->OnLockReply(i, DecodeLockReply(*reply, self->primaries_[i].entries.size()));
        });
    if (!posted.ok()) {
      thread_.truncator().PutBack(p.node, id_.epoch, p.piggybacked, thread_.clock().Now());
      OnLockReply(i, posted);
      continue;
    }
    p.sent = true;
  }
}

void CommitOperation::OnLockReply(size_t primary, absl::StatusOr<LockGrant> versions) {
  Replica& p = primaries_[primary];
  if (versions.ok() && lock_replies_ > 0 && versions->log_epoch != log_epoch_ && first_error_.ok()) {
    // Cannot happen (log_epochs.h); if it did, the states would be stamped apart: retry instead.
    first_error_ = absl::AbortedError(absl::StrCat("primaries granted locks in log epochs ", log_epoch_, " and ",
                                                   versions->log_epoch));
  }
  if (versions.ok()) {
    log_epoch_ = versions->log_epoch;
    ++lock_replies_;
    p.locked = std::move(versions->versions);
    // The new versions go into the backups' records.
    for (size_t k = 0; k < p.entries.size(); ++k) writes_[p.entries[k]].version = p.locked[k] + 1;
  } else {
    // A refusal locked nothing; a timeout or a failed connection may have (ABORT goes there anyway).
    p.refused = absl::IsAborted(versions.status()) || absl::IsInvalidArgument(versions.status()) ||
                absl::IsResourceExhausted(versions.status()) || !p.sent;
    if (first_error_.ok()) first_error_ = LockFailure(p.node, versions.status());
  }
  if (--outstanding_ > 0) return;
  if (!first_error_.ok()) {
    // An epoch closes in well under a millisecond unless a node is slow to answer; the budget is the
    // commit's RPC timeout.
    if (absl::IsAborted(first_error_) && absl::StartsWith(first_error_.message(), kEpochClosing)) {
      const absl::Time now = thread_.clock().Now();
      if (epoch_retry_deadline_ == absl::InfinitePast()) epoch_retry_deadline_ = now + thread_.options().rpc_timeout;
      if (now < epoch_retry_deadline_) return LockAgainLater();
    }
    return AbortAll(first_error_);
  }
  Validate();
}

void CommitOperation::LockAgainLater() {
  // Undo what was granted, as AbortAll does, but keep the transaction: its writes, reservations and
  // read versions stay valid; only the epoch was closing.
  int remote = 1;  // the old id is settled once its ABORTs are written (+ 1 until they are all out)
  for (const Replica& p : primaries_) remote += p.sent && !p.refused && !p.local;
  std::function<void()> settled = SettleOnce(remote);
  for (Replica& p : primaries_) {
    if (p.sent && !p.refused) {
      if (p.local) {
        thread_.participant().Abort(id_);
      } else {
        SendAbort(p, nullptr, settled);
      }
    }
    p.sent = false;
    p.refused = false;
    p.locked.clear();
  }
  thread_.messenger().Flush().IgnoreError();
  settled();
  ReleaseLogRoom();
  // The grants overwrote each entry's version with the new one (for COMMIT-BACKUP): LOCK must check the
  // version the transaction read again.
  for (WriteEntry& entry : writes_) {
    if (!entry.check_version) continue;
    entry.version = tx_->reads.at(entry.ref.address.raw()).version;
  }
  lock_replies_ = 0;
  log_epoch_ = 0;
  first_error_ = absl::OkStatus();
  ++thread_.stats().epoch_retries;
  auto self = shared_from_this();
  thread_.After(kEpochRetryDelay, [self] {
    self->id_ = self->thread_.NextId();
    if (absl::Status s = self->SetAsideLogRoom(); !s.ok()) return self->AbortAll(s);
    self->Lock();
  });
}

}  // namespace fathom::txn
