// Whether a failed commit may have taken effect. A commit that returns an error either certainly did not
// take effect (it failed before any backup could hold its record, or this coordinator, still a member,
// aborted it) or may have: every backup holds its record but no primary acknowledged, this node's lease
// lapsed (the configuration manager may have removed it and recovery decides), or it committed and is not
// known to be durable. The second kind carries a mark, so a caller can tell "run it again" from "find out
// first" (fathom::Client::Transact retries only the first kind).
#ifndef FATHOM_TXN_OUTCOME_H_
#define FATHOM_TXN_OUTCOME_H_

#include "absl/status/status.h"

namespace fathom::txn {

// `status` (an error) with the mark added. An OK status is returned as is.
absl::Status MayHaveCommittedError(absl::Status status);

// True for an error of a commit that may have taken effect; false for OK and for every other error.
bool MayHaveCommitted(const absl::Status& status);

}  // namespace fathom::txn

#endif  // FATHOM_TXN_OUTCOME_H_
