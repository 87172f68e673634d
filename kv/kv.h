// Fathom key-value tables: hash tables of byte-string keys and values living in the cluster's shared,
// replicated objects. GET is lock-free and one-sided: it copies the key's bucket (one object of 8 slots)
// with a one-sided read and checks it, with no CPU of the node holding it involved; most GETs need that
// one read, a few read another bucket or two (hopscotch or 3-way cuckoo index, TableOptions.kind). PUT and DELETE are transactions (txn.h), so they are strictly serializable and replicated,
// and they compose with other objects and other tables inside one user transaction.
//
//   // Once, from any node: create the table (its buckets spread over the nodes round robin).
//   kv::InProcessCatalog catalog;  // shared by the nodes of an embedded cluster (catalog.h)
//   ASSIGN_OR_RETURN(kv::Table users, kv::Table::Create(txns, catalog, "users", {.buckets = 4096}));
//   // From any node (another TransactionService of the same cluster): open it by name.
//   ASSIGN_OR_RETURN(kv::Table t, kv::Table::Open(other_node_txns, catalog, "users"));
//   RETURN_IF_ERROR(t.Put("alice", "{\"age\": 31}"));   // a transaction, retried on conflicts
//   ASSIGN_OR_RETURN(std::string v, t.Get("alice"));     // lock-free; NotFound if absent
//   RETURN_IF_ERROR(t.Delete("alice"));                  // NotFound if absent
//   // Several keys atomically, in the caller's own transaction:
//   RETURN_IF_ERROR(txn::RunTransaction(txns, [&](txn::Transaction& tx) -> absl::Status {
//     ASSIGN_OR_RETURN(std::string a, t.Get(tx, "a"));   // serializable read (validated at commit)
//     RETURN_IF_ERROR(t.Put(tx, "b", a));
//     return t.Delete(tx, "a");
//   }));
//   // On a node thread (txns.Post), several operations in flight, no thread hops:
//   t.GetAsync(thread, "bob", [](kv::GetResult r) { /* r.value, r.reads */ });
//   // ... and several keys atomically there (txn/run_async.h retries and commits):
//   txn::RunTransactionAsync(thread, [&](std::shared_ptr<txn::TxState> tx, txn::DoneCallback body_done) {
//     t.GetAsync(thread, tx, "a", [&, tx, body_done](absl::StatusOr<std::string> a) {
//       if (!a.ok()) return body_done(a.status());
//       t.PutAsync(thread, tx, "b", *a, body_done);
//     });
//   }, [](absl::Status committed) { ... });
//   // Grow it (twice the buckets; also automatic with TableOptions.grow_at_load): readers and writers
//   // anywhere move to the new generation by themselves.
//   RETURN_IF_ERROR(kv::Table::Resize(txns, catalog, "users"));
//   // Done with it (no operation may be running on it anywhere):
//   RETURN_IF_ERROR(kv::Table::Drop(txns, catalog, "users"));
//
// Errors: InvalidArgument for an empty or oversized key or value (limits in TableOptions), NotFound for
// a missing key or unknown table, ResourceExhausted when no displacement makes room for a new key (from
// about 94% fill, unless grow_at_load makes the blocking Put grow the table), Aborted when a transaction
// kept conflicting, Unavailable when a node is unreachable. Layouts and the resize protocol:
// docs/formats/kv.md.
#ifndef FATHOM_KV_KV_H_
#define FATHOM_KV_KV_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kv/catalog.h"
#include "kv/format.h"
#include "txn/txn.h"

namespace fathom::kv {

class TableHandle;  // table_state.h
class ThreadViews;  // thread_views.h
enum class OpKind;  // operation.h

// 4 + key + value must fit one object (1 MiB slot less its 32-byte header); this leaves room for a
// maximal key. Values up to a full 1 MiB need values split over objects, not done yet.
inline constexpr uint32_t kDefaultMaxValueBytes = (1u << 20) - 2048;

struct TableOptions {
  // kHopscotch (FaRM) or kCuckoo (Pilaf, 3-way); recorded in the root and the catalog.
  IndexKind kind = IndexKind::kHopscotch;
  uint64_t buckets = 1024;  // each holds up to 8 keys; at least 2 (hopscotch) or 3 (cuckoo)
  uint32_t max_key_bytes = 1024;
  uint32_t max_value_bytes = kDefaultMaxValueBytes;
  // Key + value up to this size sit in the bucket itself (one read per GET); larger ones go to an object
  // of their own behind a checked pointer (a second read). Decides the bucket size: 232 gives 2 KiB
  // buckets, the smallest that hold eight 100-byte values with their keys.
  uint32_t inline_bytes = 232;
  // Grow when the load (entries per slot, sampled every few inserts) reaches this, 0 < x <= 1; 0 never.
  // The blocking Put grows (Resize to twice the buckets) and also grows on ResourceExhausted; node-thread
  // PUTs never block on a resize they would start, so they return ResourceExhausted. Recorded in the root.
  double grow_at_load = 0;
};

// A resize: a new generation of the table (new root, buckets, epoch + 1) built beside the old one.
struct ResizeOptions {
  uint64_t buckets = 0;  // 0: twice the current count
  // Non-zero: resize only the generation of this epoch; FailedPrecondition if the table is at another
  // (so a retried request cannot resize twice).
  uint64_t from_epoch = 0;
  // The old generation's buckets, chunks and root are freed this long after the new one is published.
  // Freeing at once would be safe too (a freed object reads as stale and the reader refetches the table);
  // the grace spares readers still on the old generation those failed reads.
  absl::Duration grace = absl::Milliseconds(50);
  // How long a resize that finds another one under way waits for it to publish.
  absl::Duration wait_for_other = absl::Seconds(30);
  // How the resize pauses; empty: on the node's clock (its executor's RunUntil when it has one).
  std::function<void(absl::Duration)> sleep;
  // Tests only: called after each step ("frozen", "copied", "retired", "published") on the resizing thread.
  std::function<void(std::string_view step)> after_step;
};

// What a lock-free GET found, and how many one-sided reads it took (buckets and value objects).
struct GetResult {
  absl::StatusOr<std::string> value;
  int reads = 0;
};

// A handle on a table, bound to one node's transaction layer. Cheap to copy; thread-safe (the blocking
// calls from application threads, the *Async calls from that node's threads).
class Table {
 public:
  static absl::StatusOr<Table> Create(txn::TransactionService& txns, Catalog& catalog, std::string name,
                                      TableOptions options = {});
  static absl::StatusOr<Table> Open(txn::TransactionService& txns, Catalog& catalog, std::string_view name);
  // Removes the name, then frees the table's objects. REQUIRES: nobody uses the table any more.
  static absl::Status Drop(txn::TransactionService& txns, Catalog& catalog, std::string_view name);
  // Rebuilds the table with options.buckets buckets (application threads; blocks until published and the
  // old generation is freed). Concurrent GETs go on; PUT/DELETE wait while entries are copied. A resize
  // that finds another under way waits for it and returns OK. NotFound for an unknown table,
  // InvalidArgument for a bucket count the table cannot have, ResourceExhausted if the entries do not fit
  // (the table is left as it was). Docs: docs/formats/kv.md, "Resize".
  static absl::Status Resize(txn::TransactionService& txns, Catalog& catalog, std::string_view name,
                             ResizeOptions options = {});

  // Application threads (never node threads).
  absl::StatusOr<std::string> Get(std::string_view key) const;
  absl::Status Put(std::string_view key, std::string_view value) const;
  absl::Status Delete(std::string_view key) const;

  // Inside the caller's transaction (application threads). An error other than Aborted leaves the
  // transaction usable; Aborted means it cannot commit.
  absl::StatusOr<std::string> Get(txn::Transaction& tx, std::string_view key) const;
  absl::Status Put(txn::Transaction& tx, std::string_view key, std::string_view value) const;
  absl::Status Delete(txn::Transaction& tx, std::string_view key) const;

  // On a node thread of this table's node (TransactionService::Post); callbacks run on that thread.
  void GetAsync(txn::TxnThread& thread, std::string_view key, std::function<void(GetResult)> done) const;
  // Each its own transaction, retried on conflicts.
  void PutAsync(txn::TxnThread& thread, std::string key, std::string value,
                std::function<void(absl::Status)> done) const;
  void DeleteAsync(txn::TxnThread& thread, std::string key, std::function<void(absl::Status)> done) const;

  // Inside the caller's asynchronous transaction on a node thread (thread.Begin(), or the transaction
  // txn::RunTransactionAsync hands its body: txn/run_async.h); the caller commits. As the blocking
  // in-transaction calls: the GET is a serializable read (validated at commit), the writes are buffered.
  void GetAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string_view key,
                std::function<void(absl::StatusOr<std::string>)> done) const;
  void PutAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string key, std::string value,
                std::function<void(absl::Status)> done) const;
  void DeleteAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, std::string key,
                   std::function<void(absl::Status)> done) const;

  // Tests only: a lock-free GET that missed in its first bucket and has more to read calls `pause` on its
  // node thread (once per GET, before its second read) and goes on when `pause` calls `resume`. Lets a
  // test move keys between a GET's reads. Set before using this Table object.
  using GetPause = std::function<void(txn::TxnThread& thread, std::function<void()> resume)>;
  void SetGetPauseForTesting(GetPause pause) { get_pause_ = std::make_shared<GetPause>(std::move(pause)); }

  // The primary of `key`'s home bucket (clients may send work there to make GETs local); 0 if its region is
  // in no placement.
  uint32_t HomeNode(std::string_view key) const;
  const std::string& name() const;
  // Of the generation this handle uses now (a resize changes both).
  uint64_t buckets() const;
  uint64_t epoch() const;
  IndexKind kind() const;
  const TableOptions& options() const { return options_; }

 private:
  Table(txn::TransactionService* txns, std::shared_ptr<TableHandle> handle, TableOptions options);
  absl::Status CheckKey(std::string_view key) const;
  absl::Status CheckValue(std::string_view value) const;
  // A blocking Put or Delete in a transaction of its own: PutAsync or DeleteAsync on one node thread.
  absl::Status RunOwnTransaction(OpKind kind, std::string_view key, std::string_view value) const;
  // A blocking operation in `tx`, run whole on its node thread (table_tx_async.h: again on the next
  // generation if a resize moved the table).
  absl::StatusOr<std::string> RunMovable(txn::Transaction& tx, OpKind kind, std::string_view key,
                                         std::string_view value) const;
  // After a blocking Put: grows the table if its load passed grow_at_load (checked every few puts) or
  // the put found no room (`full`). Returns whether it grew.
  absl::StatusOr<bool> MaybeGrow(bool full) const;

  txn::TransactionService* txns_;
  std::shared_ptr<TableHandle> handle_;  // the current generation; shared by copies of this Table
  std::shared_ptr<ThreadViews> views_;   // handle_ as each node thread's operations take it; shared by copies
  TableOptions options_;
  std::shared_ptr<const GetPause> get_pause_;  // tests only
};

}  // namespace fathom::kv

#endif  // FATHOM_KV_KV_H_
