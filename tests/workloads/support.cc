#include "tests/workloads/support.h"

#include "absl/strings/str_cat.h"

namespace fathom::txn::workloads {

std::string EncodeInt(int64_t value) {
  std::string out(8, '\0');
  const uint64_t v = static_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (8 * i));
  return out;
}

absl::StatusOr<int64_t> DecodeInt(std::string_view bytes) {
  if (bytes.size() != 8) return absl::DataLossError(absl::StrCat("an integer of ", bytes.size(), " bytes"));
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  return static_cast<int64_t>(v);
}

uint32_t DataNode(const std::vector<TransactionService*>& services, const std::vector<uint32_t>& data_nodes, int i) {
  if (!data_nodes.empty()) return data_nodes[i % data_nodes.size()];
  return services[i % services.size()]->node().id();
}

}  // namespace fathom::txn::workloads
