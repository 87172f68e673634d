// Building and freeing a table generation's objects: empty buckets round robin over the members, the
// chunks of bucket references, and the root. Table::Create builds the first generation, Table::Resize
// the next ones, Table::Drop and Resize free them.
#ifndef FATHOM_KV_TABLE_OBJECTS_H_
#define FATHOM_KV_TABLE_OBJECTS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kv/format.h"
#include "kv/kv.h"
#include "kv/table_state.h"
#include "txn/txn.h"

namespace fathom::kv {

// InvalidArgument unless a table may have this name and these options.
absl::Status CheckTableOptions(std::string_view name, const TableOptions& options);

// The slot size of a bucket holding 8 entries of up to `inline_bytes` inline bytes: the smallest slot
// class (platform/memory/size_classes.h) that holds them.
uint32_t BucketCapacity(uint32_t inline_bytes);

// Allocates and writes a generation described by `root` (its chunks are filled in): root.buckets empty
// buckets carrying root.epoch, spread round robin over the members. On error frees what it made.
absl::StatusOr<std::shared_ptr<TableState>> BuildGeneration(txn::TransactionService& txns, std::string name,
                                                            Root root);

// Frees `refs` in transactions of a few dozen; with `values`, also the value objects buckets point to.
absl::Status FreeAll(txn::TransactionService& txns, const std::vector<object::ObjectRef>& refs, bool values);
// Frees a generation's buckets (with `values`, their value objects too), chunks and root.
absl::Status FreeGeneration(txn::TransactionService& txns, const TableState& state, bool values);

}  // namespace fathom::kv

#endif  // FATHOM_KV_TABLE_OBJECTS_H_
