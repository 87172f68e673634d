// Checks on the table calls' requests (CreateTable, DropTable, ResizeTable), shared by the server (which never hands
// a bad request to the node) and fathomctl (which says what is wrong before it dials anyone).
//
//   RETURN_IF_ERROR(ValidateTableName(request.name()));   // InvalidArgument names the rule broken
//   RETURN_IF_ERROR(ValidateCreateTableRequest(request));
#ifndef FATHOM_PLATFORM_NODE_CONTROL_TABLE_VALIDATION_H_
#define FATHOM_PLATFORM_NODE_CONTROL_TABLE_VALIDATION_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "platform/node/control/control.pb.h"
#include "platform/node/control/table_name.h"  // ValidateTableName

namespace fathom::control {

// The wire's bound on a new table's buckets (2 KiB each by default: 128 GiB); kv takes at most
// 65,536,000 (what a root's directories name: docs/formats/kv.md) and refuses more (InvalidArgument).
inline constexpr uint64_t kMaxTableBuckets = uint64_t{1} << 26;

// The name, a known kind, and numbers in range (0: kv's default). kv checks what depends on the
// combination (key and value must fit one object).
absl::Status ValidateCreateTableRequest(const CreateTableRequest& request);
// The name, and buckets 0 (twice the current count) or 2..kMaxTableBuckets. The kind is the table's, so
// the cuckoo minimum (3) and whether the entries fit are kv's to judge (InvalidArgument,
// ResourceExhausted).
absl::Status ValidateResizeTableRequest(const ResizeTableRequest& request);

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_TABLE_VALIDATION_H_
