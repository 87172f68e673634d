// Commit, VALIDATE: the objects read but not written are read again, one-sided (local ones through the same
// check); a version that moved on or a lock held by another transaction aborts. FaRM switches to an RPC
// when one primary holds more than 4 such objects, to save NIC operations; here a one-sided read costs the
// primary's CPU nothing and over shared memory is cheaper than a message, so every validation is one-sided.
#include "absl/strings/str_cat.h"
#include "platform/object/object_codec.h"
#include "txn/commit.h"

namespace fathom::txn {

void CommitOperation::ValidateReadOnly() {
  // One object read is a consistent snapshot by itself (its copy was checked whole).
  if (tx_->reads.size() > 1) {
    for (const auto& [address, read] : tx_->reads) to_validate_.push_back(read);
  }
  Validate();
}

void CommitOperation::Validate() {
  Step("validate");
  phase_ = AbortReason::kValidate;
  if (to_validate_.empty()) return OnValidated(absl::OkStatus());
  outstanding_ = to_validate_.size();
  first_error_ = absl::OkStatus();
  auto self = shared_from_this();
  for (const ReadEntry& read : to_validate_) {
    ++thread_.stats().validate_reads;
    auto primary = thread_.replicas().PrimaryOf(read.ref.address.region);
    if (!primary.ok()) {
      OnValidated(absl::UnavailableError(primary.status().message()));
      continue;
    }
    if (*primary == thread_.node_id()) {
      auto object = thread_.thread().store().Resolve(read.ref);
      absl::Status s = absl::OkStatus();
      if (!object.ok()) {
        s = object.status();
      } else if (object->version_word() != read.version) {
        s = absl::AbortedError(absl::StrCat(read.ref.address.ToString(), " changed or is locked"));
      }
      OnValidated(s);
      continue;
    }
    auto route = thread_.thread().RouteTo(read.ref.address.region);
    if (!route.ok()) {
      OnValidated(route.status());
      continue;
    }
    const uint64_t expected = read.version;
    const std::string where = read.ref.address.ToString();
    absl::Status started = thread_.thread().reader().ReadVersioned(
        *route->endpoint, *route->region, read.ref,
        [self, expected, where](absl::StatusOr<object::VersionedObject> object) {
          if (!object.ok()) {
            // Locked (a writer is committing), freed, or unreachable: the read set is not intact.
            return self->OnValidated(absl::IsAborted(object.status()) || absl::IsNotFound(object.status())
                                         ? absl::AbortedError(absl::StrCat(where, ": ", object.status().message()))
                                         : object.status());
          }
          self->OnValidated(object->header.version() == expected
                                ? absl::OkStatus()
                                : absl::AbortedError(absl::StrCat(where, " changed since it was read")));
        },
        /*fail_if_locked=*/true);
    if (!started.ok()) OnValidated(started);
  }
}

void CommitOperation::OnValidated(absl::Status status) {
  if (!status.ok() && first_error_.ok()) first_error_ = status;
  if (outstanding_ > 0 && --outstanding_ > 0) return;
  if (!first_error_.ok()) {
    return AbortAll(absl::IsAborted(first_error_) || absl::IsUnavailable(first_error_)
                        ? first_error_
                        : absl::AbortedError(first_error_.message()));
  }
  if (tx_->writes.empty()) {
    ++thread_.stats().read_only_committed;
    return Finish(absl::OkStatus());
  }
  CommitBackups();
}

}  // namespace fathom::txn
