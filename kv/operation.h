// Running one kv operation (Get, Put, Delete) inside a transaction: the loop that asks the index what it
// needs (index.h), reads it, and at the end writes the changed buckets and frees what no entry points to.
// Written against TxnOps, which the node thread's asynchronous transaction API implements (AsyncOps): user
// transactions (table.Put(tx, ...), handed whole to the transaction's node thread: table_tx_async.h) and
// node-thread clients share one algorithm.
#ifndef FATHOM_KV_OPERATION_H_
#define FATHOM_KV_OPERATION_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kv/format.h"
#include "kv/index.h"
#include "kv/table_state.h"
#include "platform/object/object_layout.h"
#include "txn/txn.h"

namespace fathom::kv {

// The operations a kv operation needs from the transaction it runs in. Callbacks may run at once or later
// on the node thread.
class TxnOps {
 public:
  using ReadManyCallback = std::function<void(absl::StatusOr<std::vector<std::string>>)>;
  using AllocCallback = std::function<void(absl::StatusOr<object::ObjectRef>)>;
  virtual ~TxnOps() = default;
  virtual void ReadMany(std::vector<object::ObjectRef> refs, ReadManyCallback done) = 0;
  virtual absl::Status Write(const object::ObjectRef& ref, std::string_view bytes) = 0;
  virtual void Alloc(uint32_t payload_capacity, const object::ObjectRef& near, AllocCallback done) = 0;
  virtual absl::Status Free(const object::ObjectRef& ref) = 0;
};

// Over the asynchronous API; every call and callback on `thread`, which must outlive the operation.
std::shared_ptr<TxnOps> AsyncOps(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx);

enum class OpKind { kGet, kPut, kDelete };

// Runs one operation in the transaction behind `ops`; `done` gets the value (Get) or an empty string.
// Does not commit. Put and Delete leave their writes buffered in the transaction.
// REQUIRES: key and value already checked against the table's limits (limits.h).
// A bucket of another generation, or (Put, Delete) a frozen one, fails it with TableMovedError before
// anything is written: the caller refetches the table and runs it again.
void RunOperation(std::shared_ptr<const TableState> table, std::shared_ptr<TxnOps> ops, OpKind kind,
                  std::string key, std::string value, std::function<void(absl::StatusOr<std::string>)> done);

// A resize's copy: puts `entry` (key `key`, absent from `table`) as it is, allocating nothing (an
// out-of-line entry keeps its value object, which the new generation now owns).
void InsertEntry(std::shared_ptr<const TableState> table, std::shared_ptr<TxnOps> ops, std::string key,
                 const Entry& entry, std::function<void(absl::Status)> done);

}  // namespace fathom::kv

#endif  // FATHOM_KV_OPERATION_H_
