// The generation a table uses now, as each node thread of its node takes it for an operation (a GET, or
// one inside a transaction).
//
// TableHandle::current() locks the handle's mutex and copies a shared_ptr whose reference count every
// thread writes; an operation also copied the handle's own shared_ptr. With a node thread per core, the
// GET path passed those cache lines between the cores on every operation (docs/benchmarks.md, "GETs that
// share no cache line"). A view gives each node thread shared_ptrs whose counts live in a block of its own,
// taken again when the handle installed a newer generation since (TableHandle::installs()).
//
//   ThreadViews views(handle, txns);           // when the Table is made; copies of it share the views
//   ThreadViews::View view = views.For(thread); // on a node thread of `txns`
#ifndef FATHOM_KV_THREAD_VIEWS_H_
#define FATHOM_KV_THREAD_VIEWS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "kv/table_state.h"
#include "txn/txn.h"
#include "txn/txn_thread.h"

namespace fathom::kv {

class ThreadViews {
 public:
  struct View {
    std::shared_ptr<TableHandle> handle;
    std::shared_ptr<const TableState> state;  // the handle's current generation when the view was taken
  };

  // One view per node thread `txns` runs now (none if it runs none yet: then For takes the handle's).
  ThreadViews(std::shared_ptr<TableHandle> handle, txn::TransactionService& txns);
  ThreadViews(const ThreadViews&) = delete;
  ThreadViews& operator=(const ThreadViews&) = delete;

  // On `thread`; each view is only ever used by its own thread. A thread of another node (or one this
  // table's node started later) gets the handle's pointers, as before views.
  View For(const txn::TxnThread& thread);

 private:
  struct alignas(64) Slot {
    const txn::TxnThread* thread = nullptr;  // set at construction, never changed
    uint64_t installs = 0;                   // the handle's installs() when `held` was taken
    // The handle's own pointers, held once: the views handed out alias this block, so copying them
    // counts here. Null until the thread's first operation.
    std::shared_ptr<const View> held;
  };

  const std::shared_ptr<TableHandle> handle_;
  std::vector<Slot> slots_;
};

}  // namespace fathom::kv

#endif  // FATHOM_KV_THREAD_VIEWS_H_
