// The rule for a table's name, in one place: the control service checks it on every table call, and kv
// on every table it creates (so a table created through the C++ API is as listable as one created by
// fathomctl).
#ifndef FATHOM_PLATFORM_NODE_CONTROL_TABLE_NAME_H_
#define FATHOM_PLATFORM_NODE_CONTROL_TABLE_NAME_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"

namespace fathom::control {

inline constexpr size_t kMaxTableNameBytes = 128;

// 1..kMaxTableNameBytes bytes of [A-Za-z0-9_.-], not starting with '.': printable in any report and safe
// in a file name. InvalidArgument names the rule broken.
absl::Status ValidateTableName(std::string_view name);

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_TABLE_NAME_H_
