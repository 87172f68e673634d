// Commit: no record goes out while this node's lease is lapsed (FaRM: a machine without a lease stops).
#include "absl/strings/str_cat.h"
#include "txn/commit.h"

namespace fathom::txn {

bool CommitOperation::LeaseLapsed() const {
  return thread_.options().lease_lapsed && thread_.options().lease_lapsed();
}

void CommitOperation::WhenLeased(void (CommitOperation::*phase)()) {
  const TxnOptions& options = thread_.options();
  const bool same_term = !options.lease_term || options.lease_term() == lease_term_;
  if (same_term && !LeaseLapsed()) return (this->*phase)();
  if (thread_.AdmittedAgainSince(id_.epoch)) {
    // Removed meanwhile: recovery decided the transaction from what the members held when they fenced
    // the removal, and it settles what the records left (locks, backup records).
    ReleaseLogRoom();
    return Finish(absl::UnavailableError(absl::StrCat("node ", thread_.node_id(), " was removed while its lease was ",
                                                      "lapsed, during the commit of ", id_.ToString(),
                                                      ": recovery decides it")));
  }
  if (!LeaseLapsed() &&
      (same_term || !options.lease_configuration || thread_.replicas().epoch() >= options.lease_configuration())) {
    // Still a member. Once the caller heard "unavailable", a commit whose records are not all durable is
    // undone; one whose backups all hold theirs (COMMIT-PRIMARY next) or that was aborting goes on.
    if (finished_ && phase != &CommitOperation::SendCommitPrimaries && phase != &CommitOperation::SendAborts) {
      return AbortAll(absl::UnavailableError("lease lapsed"));
    }
    return (this->*phase)();
  }
  // The caller hears now (it may have committed only if every backup holds its record: Finish says so);
  // the commit waits for the lease in the background.
  Finish(absl::UnavailableError(absl::StrCat(id_.ToString(), ": this node's lease lapsed during the commit")));
  ++thread_.stats().lease_waits;
  auto self = shared_from_this();
  thread_.After(options.resend_interval, [self, phase] { self->WhenLeased(phase); });
}

}  // namespace fathom::txn
