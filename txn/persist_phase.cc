// PERSIST (sync durability only), between COMMIT-BACKUP and COMMIT-PRIMARY: every replica of the written
// objects appends the transaction's states to its SSD log, and the coordinator asks again every
// sync_poll_interval until each one's log has them on disk. Only then does COMMIT-PRIMARY install and
// unlock: the primaries hold their locks meanwhile, so no transaction reads a write that a whole-cluster
// power cut could still take back.
//
// Once COMMIT-BACKUP reached every backup the transaction is committed (recovery would finish it), and a
// replica may already have logged its states, so PERSIST never aborts: if the logs are slow, Commit
// returns DeadlineExceeded after sync_timeout and the phase goes on in the background; if a replica's log
// cannot persist any more (a gap: states were dropped), Commit returns that error and the transaction
// stays locked until recovery (not built yet) deals with the node.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "txn/commit.h"

namespace fathom::txn {

void CommitOperation::AfterBackups() {
  if (!sync_) return CommitPrimaries();
  persist_deadline_ = thread_.clock().Now() + thread_.options().sync_timeout;
  for (Replica& p : primaries_) not_persisted_.push_back(&p);
  for (Replica& b : backups_) not_persisted_.push_back(&b);
  PersistRound();
}

void CommitOperation::PersistRound() {
  const std::vector<Replica*> asking = std::move(not_persisted_);
  not_persisted_.clear();
  outstanding_ = asking.size();
  first_error_ = absl::OkStatus();
  auto self = shared_from_this();
  for (Replica* r : asking) {
    if (r->local) {
      OnPersistReply(r, thread_.participant().Persist(id_));
      continue;
    }
    ++thread_.stats().persist_messages;
    Record record;
    record.kind = RecordKind::kPersist;
    record.id = id_;
    absl::Status s = thread_.messenger().Call(
        r->node, kPersistMessage, EncodeRecord(record), thread_.options().rpc_timeout,
        [self, r](absl::StatusOr<std::string_view> reply) {
          self->OnPersistReply(r, reply.ok() ? DecodePersistReply(*reply) : absl::StatusOr<PersistReply>(reply.status()));
        });
    if (!s.ok()) OnPersistReply(r, s);
  }
  thread_.messenger().Flush().IgnoreError();  // a failure reaches the callbacks
}

void CommitOperation::OnPersistReply(Replica* replica, absl::StatusOr<PersistReply> reply) {
  if (!reply.ok()) {
    // A lost or late answer is asked again; a log that can no longer persist (or a replica that has no
    // record of the transaction) never will.
    const absl::StatusCode code = reply.status().code();
    if (first_error_.ok() && (code == absl::StatusCode::kDataLoss || code == absl::StatusCode::kFailedPrecondition ||
                              code == absl::StatusCode::kInvalidArgument)) {
      first_error_ = absl::Status(code, absl::StrCat("PERSIST on node ", replica->node, ": ", reply.status().message()));
    }
    not_persisted_.push_back(replica);
  } else if (reply->persisted < reply->position) {
    not_persisted_.push_back(replica);
  }
  if (--outstanding_ > 0) return;
  if (not_persisted_.empty()) return CommitPrimaries();
  if (!first_error_.ok()) {
    return Finish(absl::Status(first_error_.code(), absl::StrCat(first_error_.message(), "; ", id_.ToString(),
                                                                 " stays locked, not durable on every replica")));
  }
  if (!finished_ && thread_.clock().Now() >= persist_deadline_) {
    Finish(absl::DeadlineExceededError(
        absl::StrCat(id_.ToString(), " is not in the SSD log of ", not_persisted_.size(), " replica(s) after ",
                     absl::FormatDuration(thread_.options().sync_timeout),
                     "; it stays locked (invisible) until it is, then commits")));
  }
  // Past the deadline the caller has its answer: ask less often (a log may stay down for long).
  const absl::Duration interval = finished_ ? std::max(thread_.options().sync_poll_interval, absl::Milliseconds(10))
                                            : thread_.options().sync_poll_interval;
  auto self = shared_from_this();
  thread_.After(interval, [self] { self->PersistRound(); });
}

}  // namespace fathom::txn
