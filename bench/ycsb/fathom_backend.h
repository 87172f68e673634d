// The fathom backend: YCSB's records in a Fathom KV table (kv/kv.h) on an embedded cluster the driver
// starts in its own process, over the real UCX fabric (shared memory by default, or tcp; never the
// simulation). A read is a lock-free one-sided GET of the key's bucket (plus the out-of-line record), an
// update is a transaction that reads the record and writes it back merged, an insert a PUT, a delete a
// DELETE, all replicated to f+1 nodes. A record is stored as record_codec.h encodes it for memcached.
//
// Clients run either on the cluster's node threads (the cluster is an AsyncLanes: one lane per node
// thread, FaRM's model of applications running on the nodes; async_runner.h), or on application threads
// with the blocking API (NewBackend: each thread talks to one node, round robin).
//
//   ASSIGN_OR_RETURN(auto cluster, FathomCluster::Start({.records = 100000}));
//   RunPhaseAsync(*workload, *cluster, options);                       // clients on node threads
//   BackendFactory make = [&] { return cluster->NewBackend(); };       // or on application threads
#ifndef FATHOM_BENCH_YCSB_FATHOM_BACKEND_H_
#define FATHOM_BENCH_YCSB_FATHOM_BACKEND_H_

#include <atomic>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/ycsb/async_backend.h"
#include "bench/ycsb/backend.h"
#include "bench/ycsb/server_memory.h"
#include "kv/catalog.h"
#include "kv/kv.h"
#include "platform/base/clock.h"
#include "server/embedded_cluster.h"
#include "txn/txn.h"

namespace fathom::ycsb {

// The table a run makes for `records` records of at most `record_bytes` encoded bytes: buckets of 8 keys
// for 75% fill (a hit then reads 1.07 buckets on average: docs/formats/kv.md), and, when a record and its
// key cannot live in a default bucket anyway, 24 inline bytes: 512-byte buckets of pointers instead of
// 2 KiB ones (less memory per record, less to copy per GET).
struct TableShape {
  uint64_t buckets = 64;
  uint32_t inline_bytes = 0;  // 0: kv's default
};
TableShape TableShapeFor(uint64_t records, uint64_t record_bytes);

struct FathomClusterOptions {
  int nodes = 3;
  int threads_per_node = 2;
  bool tcp = false;       // UCX tcp instead of shared memory
  int backups = 1;        // f
  uint64_t records = 0;   // records the table must hold (sizes the table and memory)
  uint64_t record_bytes = 1200;  // the largest encoded record (EncodeRecord), the same
  absl::Duration retry_deadline = absl::Seconds(10);  // FathomAsyncBackend's
  absl::Duration busy_poll = absl::ZeroDuration();    // the nodes' NodeOptions::busy_poll_window
};

class FathomCluster final : public AsyncLanes {
 public:
  static absl::StatusOr<std::unique_ptr<FathomCluster>> Start(const FathomClusterOptions& options);
  ~FathomCluster() override;

  // A blocking backend for an application thread, on the next node (round robin).
  std::unique_ptr<Backend> NewBackend();
  // The memory the nodes' objects take, every copy counted (server_memory.h).
  absl::StatusOr<ServerMemory> ObjectMemory();

  // AsyncLanes: lane l is thread l / nodes of node l % nodes + 1, so consecutive clients go to different
  // nodes.
  int lanes() const override { return static_cast<int>(lanes_.size()); }
  absl::Status Post(int lane, std::function<void()> task) override;
  AsyncBackend& backend(int lane) override { return *lanes_.at(static_cast<size_t>(lane)); }
  std::string Describe() const override;

 private:
  FathomCluster() = default;
  absl::Status SetUpLanes();

  FathomClusterOptions options_;
  std::unique_ptr<server::EmbeddedCluster> cluster_;
  std::vector<txn::TransactionService*> services_;  // the servers' transaction layers
  kv::InProcessCatalog catalog_;
  std::vector<kv::Table> tables_;  // one handle per node
  std::vector<std::unique_ptr<AsyncBackend>> lanes_;
  std::atomic<uint64_t> next_{0};
  uint64_t buckets_ = 0;
};

// Node thread `thread`'s transaction layer (it lives as long as `txns`), asked of the thread itself.
absl::StatusOr<txn::TxnThread*> TxnThreadOf(txn::TransactionService& txns, int thread);

// The synchronous API on the caller's thread (verify, the bank's check). A transient failure (as
// FathomAsyncBackend's) is tried again after a jittered, doubling backoff (1 ms .. 100 ms) until
// `retry_deadline` after the first; a retried update or transfer may have committed already.
class FathomBackend final : public Backend {
 public:
  FathomBackend(txn::TransactionService* txns, kv::Table table, absl::Duration retry_deadline = absl::Seconds(10),
                uint64_t seed = 1, const Clock* clock = Clock::Real())
      : txns_(txns), table_(std::move(table)), retry_deadline_(retry_deadline), random_(seed), clock_(clock) {}

  absl::Status Read(const std::string& table, const std::string& key, const FieldList* fields,
                    Record* result) override;
  absl::Status Update(const std::string& table, const std::string& key, const Record& values) override;
  absl::Status Insert(const std::string& table, const std::string& key, const Record& values) override;
  absl::Status Delete(const std::string& table, const std::string& key) override;
  absl::Status Transfer(const std::string& table, const std::string& from, const std::string& to,
                        int64_t amount) override;

 private:
  absl::Status Retried(const std::function<absl::Status()>& attempt);
  absl::Status ReadOnce(const std::string& key, const FieldList* fields, Record* result);
  absl::Status UpdateOnce(const std::string& key, const Record& values);
  absl::Status TransferOnce(const std::string& from, const std::string& to, int64_t amount);

  txn::TransactionService* txns_;
  kv::Table table_;
  const absl::Duration retry_deadline_;
  std::mt19937_64 random_;
  const Clock* clock_;
};

// A lane's backend: the table's asynchronous API on one node thread. An operation that fails with
// Unavailable, DeadlineExceeded or Cancelled (a member failed or left, a connection failed or is being made
// again, a commit's outcome is unknown), or Aborted after the table's own retries, is tried again after a jittered, doubling backoff (1 ms .. 100 ms) until
// `retry_deadline` after its first failure; only then does its error reach the driver. A retried update or
// transfer whose first commit's outcome was unknown may have committed already (the bank's total holds
// either way).
class FathomAsyncBackend final : public AsyncBackend {
 public:
  FathomAsyncBackend(txn::TxnThread* thread, kv::Table table, uint64_t seed,
                     absl::Duration retry_deadline = absl::Seconds(10))
      : thread_(thread), table_(std::move(table)), seed_(seed), retry_deadline_(retry_deadline) {}

  void Read(const std::string& table, const std::string& key, const FieldList* fields, ReadDone done) override;
  void Update(const std::string& table, const std::string& key, const Record& values, Done done) override;
  void Insert(const std::string& table, const std::string& key, const Record& values, Done done) override;
  void Delete(const std::string& table, const std::string& key, Done done) override;
  void Transfer(const std::string& table, const std::string& from, const std::string& to, int64_t amount,
                Done done) override;

 private:
  // `start(done)` (which reports once through `done`), again while it fails transiently (see above); no
  // retry state is made before the first transient failure.
  template <typename Start>
  void WithRetries(Start start, Done done);
  // One attempt of an update or a transfer: a transaction, retried on conflicts.
  void StartUpdate(const std::string& key, const Record& values, Done done);
  void StartTransfer(const std::string& from, const std::string& to, int64_t amount, Done done);
  // After `attempt` failed transiently: again after a backoff, until the deadline.
  template <typename Result>
  void RetryLater(std::function<void(std::function<void(Result)>)> attempt, std::function<void(Result)> done);

  txn::TxnThread* const thread_;
  const kv::Table table_;
  uint64_t seed_;  // retry jitter, a new one per update
  const absl::Duration retry_deadline_;
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_FATHOM_BACKEND_H_
