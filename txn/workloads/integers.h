// 8-byte little-endian integers: the payload of the workloads' counters and balances.
#ifndef FATHOM_TXN_WORKLOADS_INTEGERS_H_
#define FATHOM_TXN_WORKLOADS_INTEGERS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fathom::txn::workloads {

std::string EncodeInt(int64_t value);
// DataLoss unless exactly 8 bytes.
absl::StatusOr<int64_t> DecodeInt(std::string_view bytes);

}  // namespace fathom::txn::workloads

#endif  // FATHOM_TXN_WORKLOADS_INTEGERS_H_
