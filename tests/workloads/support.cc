#include "tests/workloads/support.h"

#include "absl/strings/str_cat.h"
#include "platform/base/byte_order.h"

namespace fathom::txn::workloads {

std::string EncodeInt(int64_t value) {
  std::string out;
  AppendU64(out, static_cast<uint64_t>(value));
  return out;
}

absl::StatusOr<int64_t> DecodeInt(std::string_view bytes) {
  if (bytes.size() != 8) return absl::DataLossError(absl::StrCat("an integer of ", bytes.size(), " bytes"));
  return static_cast<int64_t>(LoadU64(bytes.data()));
}

uint32_t DataNode(const std::vector<TransactionService*>& services, const std::vector<uint32_t>& data_nodes, int i) {
  if (!data_nodes.empty()) return data_nodes[i % data_nodes.size()];
  return services[i % services.size()]->node().id();
}

}  // namespace fathom::txn::workloads
