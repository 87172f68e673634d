// Measurements: what one client thread observed, per operation type — a latency histogram for the
// operations that succeeded, one for those that failed (YCSB's "<OP>-FAILED" series), and counts per
// return code (YCSB's "Return=OK" lines). Each thread owns one; the driver merges them at the end, so
// recording takes no lock.
//
//   Measurements m;
//   m.Record(Operation::kRead, /*latency_ns=*/48'000, ReturnCode::kOk);
#ifndef FATHOM_BENCH_YCSB_MEASUREMENTS_H_
#define FATHOM_BENCH_YCSB_MEASUREMENTS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"

#include "bench/ycsb/backend.h"
#include "bench/ycsb/latency_histogram.h"

namespace fathom::ycsb {

// In the order the report prints them.
// kTransfer is ours, not YCSB's: the transactional bank (core_workload.h, transferproportion).
enum class Operation { kRead, kUpdate, kInsert, kScan, kReadModifyWrite, kDelete, kTransfer };
inline constexpr int kOperationCount = 7;

// YCSB's names: "READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE"; and "TRANSFER".
const char* OperationName(Operation op);

class Measurements {
 public:
  // The latency goes to the operation's success series if `code` is OK, else to its failure series.
  void Record(Operation op, uint64_t latency_ns, ReturnCode code);
  // The same with the operation's status; an ERROR's message is kept (errors()).
  void Record(Operation op, uint64_t latency_ns, const absl::Status& status);
  void Merge(const Measurements& other);

  // "<OP>: <status>" of the operations that ended in ERROR, with how many did; at most kMaxErrorKinds
  // distinct ones, the rest counted under "(other errors)".
  static constexpr size_t kMaxErrorKinds = 16;
  const std::map<std::string, uint64_t>& errors() const { return errors_; }
  // The same for NOT_FOUND returns: normal for a workload that reads keys it never wrote, a lost record
  // for one that reads only loaded keys (the fault tests fail on any).
  const std::map<std::string, uint64_t>& not_found() const { return not_found_; }
  // ERROR returns over every operation type.
  uint64_t error_count() const;

  const LatencyHistogram& Latencies(Operation op, bool failed) const {
    return latencies_[Index(op)][failed ? 1 : 0];
  }
  uint64_t Returns(Operation op, ReturnCode code) const {
    return returns_[Index(op)][static_cast<int>(code)];
  }

 private:
  static int Index(Operation op) { return static_cast<int>(op); }
  std::array<std::array<LatencyHistogram, 2>, kOperationCount> latencies_;
  std::array<std::array<uint64_t, kReturnCodeCount>, kOperationCount> returns_{};
  std::map<std::string, uint64_t> errors_;
  std::map<std::string, uint64_t> not_found_;
  void Add(std::map<std::string, uint64_t>& kinds, const std::string& what, uint64_t count);
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_MEASUREMENTS_H_
