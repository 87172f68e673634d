// ClosedLoop: a load generator on the asynchronous API. Every node thread of every node coordinates
// transactions, keeping `depth` of them in flight (a new one starts when one finishes; an aborted one is
// retried as a new transaction), until each thread has committed its quota. For benchmarks and stress
// tests; the work runs on the node threads, so the application threads only wait.
#ifndef FATHOM_TXN_WORKLOADS_CLOSED_LOOP_H_
#define FATHOM_TXN_WORKLOADS_CLOSED_LOOP_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/object/object_layout.h"
#include "txn/txn.h"

namespace fathom::txn::workloads {

enum class TxnKind {
  kReadWrite,  // read `objects` distinct objects, write each back incremented
  kReadOnly,   // read `objects` distinct objects
  kTransfer,   // bank transfer: read two accounts, move 1 from the first to the second if it has it
};

struct LoadSpec {
  TxnKind kind = TxnKind::kReadWrite;
  int objects = 2;
  int depth = 4;                   // transactions in flight per thread
  int commits_per_thread = 1000;
  uint64_t seed = 1;
  absl::Duration timeout = absl::Seconds(120);
};

struct LoadResult {
  uint64_t committed = 0;
  uint64_t aborted = 0;                  // attempts that aborted (then retried)
  uint64_t failed = 0;                   // other errors (not retried)
  absl::Status first_failure;
  std::map<std::string, uint64_t> abort_reasons;  // by the abort message's first words
  absl::Duration elapsed;
  std::vector<absl::Duration> latencies;  // of committed transactions, from begin to commit's OK, sorted
  absl::Duration Percentile(double p) const;
  double commits_per_second() const;
};

// Runs `spec` on every thread of every service at once, over `objects` (8-byte integers). The services
// must all belong to one cluster.
absl::StatusOr<LoadResult> RunClosedLoop(const std::vector<TransactionService*>& services,
                                         const std::vector<object::ObjectRef>& objects, const LoadSpec& spec);

}  // namespace fathom::txn::workloads

#endif  // FATHOM_TXN_WORKLOADS_CLOSED_LOOP_H_
