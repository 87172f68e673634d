#include "platform/fabric/fabric.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fathom::fabric {

const char* OpTypeName(OpType type) {
  switch (type) {
    case OpType::kRead: return "Read";
    case OpType::kWrite: return "Write";
    case OpType::kCompareSwap: return "CompareSwap";
    case OpType::kFetchAdd: return "FetchAdd";
    case OpType::kCall: return "Call";
  }
  return "Unknown";
}

absl::Status WaitForCompletions(Worker& worker, size_t count, std::vector<Completion>& out,
                                absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  Completion batch[64];
  size_t got = 0;
  while (got < count) {
    size_t n = worker.Poll(batch);
    for (size_t i = 0; i < n; ++i) out.push_back(batch[i]);
    got += n;
    if (got >= count) break;
    absl::Time now = absl::Now();
    if (now >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("waited ", absl::FormatDuration(timeout), " for ", count,
                                                      " completions, got ", got));
    }
    if (n == 0) worker.Wait(std::min(deadline - now, absl::Milliseconds(10)));
  }
  return absl::OkStatus();
}

}  // namespace fathom::fabric
