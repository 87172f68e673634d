#include "kv/table_moved.h"

namespace fathom::kv {

void OnTableMoved(txn::TxnThread& thread, std::shared_ptr<TableHandle> handle, uint64_t epoch,
                  absl::Status rejection, MovedWait wait, std::function<void(MovedWait)> again,
                  std::function<void(absl::Status)> fail) {
  handle->RefreshAsync(thread, epoch, [&thread, rejection, wait, again, fail](absl::StatusOr<bool> newer) mutable {
    if (!newer.ok()) return fail(newer.status());
    if (*newer) return again(wait);
    if (!wait.KeepWaiting(thread.clock().Now())) return fail(rejection);
    thread.After(kMovedPoll, [again, wait] { again(wait); });
  });
}

}  // namespace fathom::kv
