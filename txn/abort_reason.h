// Why a transaction a node coordinated did not commit: the `reason` label of fathom_txn_aborts_total
// (docs/formats/metrics.md). Conflicts end an attempt that a retry may commit; errors do not.
#ifndef FATHOM_TXN_ABORT_REASON_H_
#define FATHOM_TXN_ABORT_REASON_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"

namespace fathom::txn {

enum class AbortReason {
  // Conflicts (Aborted).
  kRead,      // execution: an object stayed locked, changed between two reads, or too many reads in flight
  kPlan,      // commit planning: no log room, or a region's replicas changed under the plan
  kLock,      // a primary refused the LOCK: an object locked by another commit or changed since it was read
  kValidate,  // an object read but not written changed or was locked at validation
  kCommit,    // after the locks: a replica refused a commit record
  // Errors.
  kUnavailable,       // a replica unreachable, a region with no primary, this node's lease lapsed
  kDeadlineExceeded,  // no answer in time, or a sync commit not durable in time
  kOther,             // anything else (an invalid request, sync durability without a log, ...)
};
inline constexpr size_t kAbortReasons = static_cast<size_t>(AbortReason::kOther) + 1;

constexpr std::string_view AbortReasonName(AbortReason reason) {
  switch (reason) {
    case AbortReason::kRead: return "read";
    case AbortReason::kPlan: return "plan";
    case AbortReason::kLock: return "lock";
    case AbortReason::kValidate: return "validate";
    case AbortReason::kCommit: return "commit";
    case AbortReason::kUnavailable: return "unavailable";
    case AbortReason::kDeadlineExceeded: return "deadline_exceeded";
    case AbortReason::kOther: return "other";
  }
  return "other";
}

constexpr bool IsConflict(AbortReason reason) { return reason <= AbortReason::kCommit; }

// An error's reason, or `conflict` for an Aborted status (the phase it happened in).
inline AbortReason AbortReasonOf(const absl::Status& status, AbortReason conflict) {
  if (absl::IsAborted(status)) return conflict;
  if (absl::IsUnavailable(status)) return AbortReason::kUnavailable;
  if (absl::IsDeadlineExceeded(status)) return AbortReason::kDeadlineExceeded;
  return AbortReason::kOther;
}

}  // namespace fathom::txn

#endif  // FATHOM_TXN_ABORT_REASON_H_
