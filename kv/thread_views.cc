#include "kv/thread_views.h"

namespace fathom::kv {

ThreadViews::ThreadViews(std::shared_ptr<TableHandle> handle, txn::TransactionService& txns)
    : handle_(std::move(handle)), slots_(static_cast<size_t>(std::max(0, txns.threads()))) {
  for (size_t i = 0; i < slots_.size(); ++i) {
    absl::StatusOr<txn::TxnThread*> thread = txns.Thread(static_cast<int>(i));
    if (thread.ok()) slots_[i].thread = *thread;
  }
}

ThreadViews::View ThreadViews::For(const txn::TxnThread& thread) {
  const size_t index = thread.index();
  if (index >= slots_.size() || slots_[index].thread != &thread) return View{handle_, handle_->current()};
  Slot& slot = slots_[index];
  // Read before current(): a generation installed in between is then taken again at the next call.
  const uint64_t installs = handle_->installs();
  if (slot.held == nullptr || slot.installs != installs) {
    slot.held = std::make_shared<const View>(View{handle_, handle_->current()});
    slot.installs = installs;
  }
  return View{std::shared_ptr<TableHandle>(slot.held, slot.held->handle.get()),
              std::shared_ptr<const TableState>(slot.held, slot.held->state.get())};
}

}  // namespace fathom::kv
