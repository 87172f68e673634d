#include "bench/ycsb/measurements.h"

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

void Measurements::Merge(const Measurements& other) {
  for (int op = 0; op < kOperationCount; ++op) {
    for (int series = 0; series < 2; ++series) latencies_[op][series].Merge(other.latencies_[op][series]);
    for (int code = 0; code < kReturnCodeCount; ++code) returns_[op][code] += other.returns_[op][code];
  }
}

}  // namespace fathom::ycsb
