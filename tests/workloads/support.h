// Helpers every workload shares: 8-byte little-endian integers (counters, balances) and object placement.
#ifndef FATHOM_TXN_WORKLOADS_SUPPORT_H_
#define FATHOM_TXN_WORKLOADS_SUPPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "txn/txn.h"

namespace fathom::txn::workloads {

std::string EncodeInt(int64_t value);
// DataLoss unless exactly 8 bytes.
absl::StatusOr<int64_t> DecodeInt(std::string_view bytes);

// The node whose memory holds a workload's object `i`: data_nodes round robin, or the services' nodes.
uint32_t DataNode(const std::vector<TransactionService*>& services, const std::vector<uint32_t>& data_nodes, int i);

}  // namespace fathom::txn::workloads

#endif  // FATHOM_TXN_WORKLOADS_SUPPORT_H_
