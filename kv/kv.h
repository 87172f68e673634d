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
//   // Done with it (no operation may be running on it anywhere):
//   RETURN_IF_ERROR(kv::Table::Drop(txns, catalog, "users"));
//
// Errors: InvalidArgument for an empty or oversized key or value (limits in TableOptions), NotFound for
// a missing key or unknown table, ResourceExhausted when no displacement makes room for a new key (from
// about 94% fill; tables do not resize yet: size `buckets` for the data), Aborted when a transaction kept conflicting, Unavailable when
// a node is unreachable. Layouts: docs/formats/kv.md.
#ifndef FATHOM_KV_KV_H_
#define FATHOM_KV_KV_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "kv/catalog.h"
#include "kv/format.h"
#include "txn/txn.h"

namespace fathom::kv {

struct TableState;  // operation.h

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

  // The node holding `key`'s home bucket (clients may send work there to make GETs local).
  uint32_t HomeNode(std::string_view key) const;
  const std::string& name() const;
  uint64_t buckets() const;
  IndexKind kind() const;
  const TableOptions& options() const { return options_; }

 private:
  Table(txn::TransactionService* txns, std::shared_ptr<const TableState> state, TableOptions options)
      : txns_(txns), state_(std::move(state)), options_(options) {}
  absl::Status CheckKey(std::string_view key) const;
  absl::Status CheckValue(std::string_view value) const;

  txn::TransactionService* txns_;
  std::shared_ptr<const TableState> state_;
  TableOptions options_;
  std::shared_ptr<const GetPause> get_pause_;  // tests only
};

}  // namespace fathom::kv

#endif  // FATHOM_KV_KV_H_
