#include "tests/workloads/cycle.h"

#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "platform/base/mutex.h"
#include "tests/workloads/support.h"

namespace fathom::txn::workloads {

absl::StatusOr<CycleResult> RunCycle(const std::vector<TransactionService*>& services, const CycleOptions& options) {
  const int n = options.nodes_in_ring;
  if (services.empty() || n < 4) return absl::InvalidArgumentError("a cycle needs nodes and 4 objects");
  std::vector<object::ObjectRef> ring;
  {
    Transaction tx = services[0]->Begin();
    for (int i = 0; i < n; ++i) {
      auto ref = tx.Alloc(8, {.node = DataNode(services, options.data_nodes, i)});
      if (!ref.ok()) return ref.status();
      if (absl::Status s = tx.Write(*ref, EncodeInt((i + 1) % n)); !s.ok()) return s;
      ring.push_back(*ref);
    }
    if (absl::Status s = tx.Commit(); !s.ok()) return s;
  }
  absl::Mutex mu;
  CycleResult result;
  absl::Status failure;
  std::vector<std::thread> threads;
  for (size_t node = 0; node < services.size(); ++node) {
    for (int c = 0; c < options.clients_per_node; ++c) {
      threads.emplace_back([&, node, c] {
        std::mt19937_64 random(options.seed * 104729 + node * 31 + c);
        RetryOptions retry = options.retry;
        retry.seed = random();
        uint64_t committed = 0, gave_up = 0;
        absl::Status error;
        for (int i = 0; i < options.transactions_per_client && error.ok(); ++i) {
          const int r = static_cast<int>(random() % n);
          absl::Status s = RunTransaction(*services[node], [&](Transaction& tx) -> absl::Status {
            auto next = [&](int at) -> absl::StatusOr<int> {
              auto bytes = tx.Read(ring[at]);
              if (!bytes.ok()) return bytes.status();
              auto value = DecodeInt(*bytes);
              if (!value.ok()) return value.status();
              if (*value < 0 || *value >= n) return absl::DataLossError(absl::StrCat("link to ", *value));
              return static_cast<int>(*value);
            };
            auto r2 = next(r);
            if (!r2.ok()) return r2.status();
            auto r3 = next(*r2);
            if (!r3.ok()) return r3.status();
            auto r4 = next(*r3);
            if (!r4.ok()) return r4.status();
            if (absl::Status w = tx.Write(ring[r], EncodeInt(*r3)); !w.ok()) return w;
            if (absl::Status w = tx.Write(ring[*r2], EncodeInt(*r4)); !w.ok()) return w;
            return tx.Write(ring[*r3], EncodeInt(*r2));
          }, retry);
          if (s.ok()) {
            ++committed;
          } else if (absl::IsAborted(s)) {
            ++gave_up;
          } else {
            error = s;
          }
        }
        MutexLock lock(&mu);
        result.committed += committed;
        result.gave_up += gave_up;
        if (failure.ok()) failure = error;
      });
    }
  }
  for (auto& t : threads) t.join();
  if (!failure.ok()) return failure;
  // One read-only transaction walks the ring.
  Transaction tx = services[0]->Begin();
  std::vector<int> links(n);
  for (int i = 0; i < n; ++i) {
    auto bytes = tx.Read(ring[i]);
    if (!bytes.ok()) return bytes.status();
    auto value = DecodeInt(*bytes);
    if (!value.ok()) return value.status();
    links[i] = static_cast<int>(*value);
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  std::vector<bool> seen(n, false);
  int at = 0;
  for (int step = 0; step < n; ++step) {
    if (links[at] < 0 || links[at] >= n || seen[at]) {
      result.violation = absl::StrCat("after ", step, " steps the walk from 0 reached ", at, " again or left the ring");
      return result;
    }
    seen[at] = true;
    at = links[at];
  }
  if (at != 0) result.violation = absl::StrCat("the walk from 0 did not return to 0 after ", n, " steps");
  return result;
}

}  // namespace fathom::txn::workloads
