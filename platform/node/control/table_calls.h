// TableCalls: what serves the control service's table calls on a node. The node runtime knows nothing
// of kv tables (kv sits above it), so the process that has a catalog (fathomd with --zk) installs one
// with Node::SetTableCalls; server/table_admin.h is kv's.
//
// Called on gRPC threads, several at once, with validated requests (table_validation.h).
#ifndef FATHOM_PLATFORM_NODE_CONTROL_TABLE_CALLS_H_
#define FATHOM_PLATFORM_NODE_CONTROL_TABLE_CALLS_H_

#include "absl/status/statusor.h"
#include "platform/node/control/control.pb.h"

namespace fathom::control {

class TableCalls {
 public:
  virtual ~TableCalls() = default;
  // AlreadyExists for a taken name; InvalidArgument for options kv refuses.
  virtual absl::StatusOr<CreateTableResponse> Create(const CreateTableRequest& request) = 0;
  // NotFound for an unknown name.
  virtual absl::StatusOr<DropTableResponse> Drop(const DropTableRequest& request) = 0;
  virtual absl::StatusOr<ListTablesResponse> List() = 0;
  // NotFound for an unknown name; InvalidArgument for a bucket count the table cannot have;
  // ResourceExhausted when its entries do not fit (the table is left as it was).
  virtual absl::StatusOr<ResizeTableResponse> Resize(const ResizeTableRequest& request) = 0;
};

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_TABLE_CALLS_H_
