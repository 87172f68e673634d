#include "bench/ycsb/measurements.h"

#include "absl/strings/str_cat.h"

namespace fathom::ycsb {

const char* OperationName(Operation op) {
  switch (op) {
    case Operation::kRead:
      return "READ";
    case Operation::kUpdate:
      return "UPDATE";
    case Operation::kInsert:
      return "INSERT";
    case Operation::kScan:
      return "SCAN";
    case Operation::kReadModifyWrite:
      return "READ-MODIFY-WRITE";
    case Operation::kDelete:
      return "DELETE";
    case Operation::kTransfer:
      return "TRANSFER";
  }
  return "UNKNOWN";
}

void Measurements::Record(Operation op, uint64_t latency_ns, ReturnCode code) {
  latencies_[Index(op)][code == ReturnCode::kOk ? 0 : 1].Record(latency_ns);
  ++returns_[Index(op)][static_cast<int>(code)];
}

void Measurements::Record(Operation op, uint64_t latency_ns, const absl::Status& status) {
  const ReturnCode code = ReturnCodeOf(status);
  Record(op, latency_ns, code);
  if (code == ReturnCode::kError) Add(errors_, absl::StrCat(OperationName(op), ": ", status.ToString()), 1);
  if (code == ReturnCode::kNotFound) Add(not_found_, absl::StrCat(OperationName(op), ": ", status.ToString()), 1);
}

void Measurements::Add(std::map<std::string, uint64_t>& kinds, const std::string& what, uint64_t count) {
  auto it = kinds.find(what);
  if (it == kinds.end() && kinds.size() >= kMaxErrorKinds) it = kinds.try_emplace(&kinds == &errors_ ? "(other errors)" : "(others)", 0).first;
  if (it == kinds.end()) it = kinds.try_emplace(what, 0).first;
  it->second += count;
}

uint64_t Measurements::error_count() const {
  uint64_t total = 0;
  for (int op = 0; op < kOperationCount; ++op) total += returns_[op][static_cast<int>(ReturnCode::kError)];
  return total;
}

void Measurements::Merge(const Measurements& other) {
  for (int op = 0; op < kOperationCount; ++op) {
    for (int series = 0; series < 2; ++series) latencies_[op][series].Merge(other.latencies_[op][series]);
    for (int code = 0; code < kReturnCodeCount; ++code) returns_[op][code] += other.returns_[op][code];
  }
  for (const auto& [what, count] : other.errors_) Add(errors_, what, count);
  for (const auto& [what, count] : other.not_found_) Add(not_found_, what, count);
}

}  // namespace fathom::ycsb
