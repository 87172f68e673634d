// See outcome.h.
#include "txn/outcome.h"

#include "absl/strings/cord.h"

namespace fathom::txn {
namespace {

// A status payload (absl::Status::SetPayload): kept by copies and moves of the status, never on the wire.
constexpr char kMayHaveCommittedPayload[] = "fathom.txn/may-have-committed";

}  // namespace

absl::Status MayHaveCommittedError(absl::Status status) {
  if (!status.ok()) status.SetPayload(kMayHaveCommittedPayload, absl::Cord("1"));
  return status;
}

bool MayHaveCommitted(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kMayHaveCommittedPayload).has_value();
}

}  // namespace fathom::txn
