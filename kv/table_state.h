// A table generation (TableState: one root, its buckets and index) and the handle that says which
// generation a Table uses now. A resize publishes a new generation (new root, epoch + 1) in the catalog;
// an operation that meets a bucket of a retired generation (its epoch word no longer matches) or a frozen
// one (a resize is copying it) is rejected with TableMovedError, refetches the descriptor from the catalog
// (TableHandle::Refresh) and retries on the new generation: Pilaf's connection reset, driven by the
// rejection itself rather than by a watch.
#ifndef FATHOM_KV_TABLE_STATE_H_
#define FATHOM_KV_TABLE_STATE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kv/catalog.h"
#include "kv/format.h"
#include "kv/index.h"
#include "platform/object/object_layout.h"
#include "txn/txn.h"

namespace fathom::kv {

// One generation of a table: immutable once loaded, shared by every thread that uses it.
struct TableState {
  std::string name;
  object::ObjectRef root_ref;
  Root root;
  std::vector<object::ObjectRef> bucket_refs;
  // The chunks holding bucket_refs: root.chunks, or the chunks its directories name.
  std::vector<object::ObjectRef> chunk_refs;
  std::unique_ptr<Index> index;

  uint64_t epoch() const { return root.epoch; }
  // What this generation's buckets carry in their epoch word.
  uint32_t epoch_word() const { return static_cast<uint32_t>(root.epoch); }
  TableInfo info() const { return TableInfo{name, root.kind, root.epoch, root_ref}; }
};

// An operation read a bucket of a generation that is being replaced (frozen: PUT/DELETE only) or has
// been (its epoch word is newer): Aborted, marked so the kv layer refetches the table before retrying.
absl::Status TableMovedError(std::string_view why);
bool IsTableMoved(const absl::Status& status);

// Loads the generation `info` names (root and chunks). Blocking: application threads only.
absl::StatusOr<std::shared_ptr<TableState>> LoadState(txn::TransactionService& txns, const TableInfo& info);
// Loads the generation `found` (a catalog entry) names, or a newer one: a resize may publish a new
// generation and free the one a Find returned before its root is read (NotFound: freed or reused); the
// catalog then names the newer one, which is loaded instead. Other errors, and NotFound while the catalog
// entry stays the same, are returned.
absl::StatusOr<std::shared_ptr<TableState>> LoadCurrentState(txn::TransactionService& txns, Catalog& catalog,
                                                             TableInfo found);
// The same on a node thread; `done` runs there.
void LoadStateAsync(txn::TxnThread& thread, const TableInfo& info,
                    std::function<void(absl::StatusOr<std::shared_ptr<TableState>>)> done);

// The generation a Table (and its copies) uses now. Thread-safe; always held by a shared_ptr.
class TableHandle : public std::enable_shared_from_this<TableHandle> {
 public:
  // `catalog` must outlive the handle.
  TableHandle(txn::TransactionService* txns, Catalog* catalog, std::shared_ptr<const TableState> state)
      : txns_(txns), catalog_(catalog), name_(state->name), state_(std::move(state)) {}

  std::shared_ptr<const TableState> current() const;
  // How many generations were installed since the handle was made: current() changed iff this did.
  uint64_t installs() const { return installs_.load(std::memory_order_acquire); }
  // After a rejection seen with generation `seen`: installs the catalog's generation if it is newer.
  // True when current() is now newer than `seen` (retry at once); false when the catalog still names
  // `seen` (the resize has not published yet: wait, then retry). Blocking: application threads.
  absl::StatusOr<bool> Refresh(uint64_t seen);
  // The same on a node thread; `done` runs there.
  void RefreshAsync(txn::TxnThread& thread, uint64_t seen, std::function<void(absl::StatusOr<bool>)> done);

  txn::TransactionService& txns() const { return *txns_; }
  Catalog& catalog() const { return *catalog_; }
  const std::string& name() const { return name_; }
  // Counts a blocking Put through this handle; returns the count (the grow check runs every few).
  uint64_t CountPut() { return puts_.fetch_add(1, std::memory_order_relaxed) + 1; }

 private:
  // Keeps the newer of the installed generation and `state`.
  void Install(std::shared_ptr<const TableState> state);

  txn::TransactionService* const txns_;
  Catalog* const catalog_;
  const std::string name_;
  std::atomic<uint64_t> puts_{0};
  mutable absl::Mutex mu_;
  std::shared_ptr<const TableState> state_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> installs_{0};  // written under mu_, read without it
};

}  // namespace fathom::kv

#endif  // FATHOM_KV_TABLE_STATE_H_
