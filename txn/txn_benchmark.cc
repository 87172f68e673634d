// Commit throughput and latency on a 3-node embedded cluster (UCX shared memory or tcp), f = 1 or 2:
// read-write transactions of 1-4 objects, read-only transactions, bank transfers. Every node thread
// coordinates transactions, several in flight each (closed loop). Beside the measured messages per commit
// it prints FaRM's analytic count, Pw*(f+3) + Pr, computed from the same run's Pw and Pr.
//
//   bazel run -c opt //txn:txn_benchmark -- --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <map>
#include <memory>
#include <tuple>

#include "benchmark/benchmark.h"
#include "txn/testing/txn_cluster.h"
#include "tests/workloads/closed_loop.h"
#include "tests/workloads/support.h"

namespace fathom::txn {
namespace {

using workloads::LoadSpec;
using workloads::TxnKind;

constexpr int kAccounts = 1000;
constexpr int64_t kInitialBalance = 1000;

struct Setup {
  std::unique_ptr<testing::TxnCluster> cluster;
  std::vector<object::ObjectRef> objects;
};

// One cluster per (fabric, f), kept across benchmarks (starting one takes a while).
Setup& ClusterFor(bool tcp, int backups) {
  static auto* setups = new std::map<std::pair<bool, int>, Setup>();
  Setup& setup = (*setups)[{tcp, backups}];
  if (setup.cluster != nullptr) return setup;
  for (auto& [key, other] : *setups) other.cluster.reset();  // one cluster at a time: they share 2 cores
  server::EmbeddedClusterOptions options;
  options.nodes = 3;
  options.threads = 2;
  options.memory_bytes = 16 << 20;
  options.fabric = tcp ? server::EmbeddedFabric::kUcxTcp : server::EmbeddedFabric::kUcxSharedMemory;
  TxnOptions txn;
  txn.backups = backups;
  auto cluster = testing::TxnCluster::Start(options, txn);
  if (!cluster.ok()) {
    fprintf(stderr, "cluster: %s\n", cluster.status().ToString().c_str());
    abort();
  }
  setup.cluster = std::move(*cluster);
  setup.objects.clear();
  // The accounts, spread over the nodes, in batches of 50 per transaction.
  for (int made = 0; made < kAccounts;) {
    Transaction tx = setup.cluster->service(1).Begin();
    for (int i = 0; i < 50 && made < kAccounts; ++i, ++made) {
      auto ref = tx.Alloc(8, {.node = static_cast<uint32_t>(1 + made % 3)});
      if (!ref.ok() || !tx.Write(*ref, workloads::EncodeInt(kInitialBalance)).ok()) abort();
      setup.objects.push_back(*ref);
    }
    if (!tx.Commit().ok()) abort();
  }
  return setup;
}

// Args: tcp (0/1), f, kind (0 read-write, 1 read-only, 2 transfer), objects, depth (transactions in flight
// per node thread; 3 nodes x 2 threads coordinate).
void BM_Commit(benchmark::State& state) {
  const bool tcp = state.range(0) != 0;
  const int backups = static_cast<int>(state.range(1));
  LoadSpec spec;
  spec.kind = static_cast<TxnKind>(state.range(2));
  spec.objects = static_cast<int>(state.range(3));
  spec.depth = static_cast<int>(state.range(4));
  spec.commits_per_thread = tcp ? 1000 : 5000;
  Setup& setup = ClusterFor(tcp, backups);
  std::vector<TransactionService*> services;
  for (int i = 1; i <= 3; ++i) services.push_back(&setup.cluster->service(i));
  CoordinatorStats before;
  auto sum = [&] {
    CoordinatorStats total;
    for (TransactionService* s : services) {
      auto stats = s->Stats();
      if (!stats.ok()) abort();
      total += stats->coordinator;
    }
    return total;
  };
  workloads::LoadResult last;
  before = sum();
  for (auto _ : state) {
    spec.seed += 1;
    auto result = workloads::RunClosedLoop(services, setup.objects, spec);
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      return;
    }
    if (result->failed > 0) {
      state.SkipWithError(result->first_failure.ToString().c_str());
      return;
    }
    state.SetIterationTime(absl::ToDoubleSeconds(result->elapsed));
    state.counters["commits_per_s"] = result->commits_per_second();
    state.counters["p50_us"] = absl::ToDoubleMicroseconds(result->Percentile(0.5));
    state.counters["p99_us"] = absl::ToDoubleMicroseconds(result->Percentile(0.99));
    state.counters["abort_ratio"] = static_cast<double>(result->aborted) / (result->committed + result->aborted);
    last = std::move(*result);
  }
  const CoordinatorStats after = sum();
  const double commits = static_cast<double>(after.committed - before.committed);
  if (commits == 0) return;
  const double pw = (after.write_primaries - before.write_primaries) / commits;
  const double pr = (after.validate_reads - before.validate_reads) / commits;
  const double messages = (2.0 * (after.lock_messages - before.lock_messages) +
                           (after.commit_backup_messages - before.commit_backup_messages) +
                           (after.commit_primary_messages - before.commit_primary_messages) +
                           (after.abort_messages - before.abort_messages) +
                           (after.truncate_messages - before.truncate_messages)) /
                          commits;
  state.counters["Pw"] = pw;
  state.counters["msgs_per_commit"] = messages;
  state.counters["validate_reads"] = pr;
  state.counters["farm_ops"] = pw * (backups + 3) + pr;
  state.counters["exec_reads"] = (after.execution_reads - before.execution_reads) / commits;
  state.SetItemsProcessed(static_cast<int64_t>(commits));
}

void Configurations(benchmark::internal::Benchmark* b) {
  b->ArgNames({"tcp", "f", "kind", "objects", "depth"});
  for (int tcp : {0, 1}) {
    for (int f : {1, 2}) {
      for (int objects : {1, 2, 4}) b->Args({tcp, f, 0, objects, 1});
      b->Args({tcp, f, 1, 2, 1});  // read-only, 2 objects
      b->Args({tcp, f, 2, 2, 1});  // bank transfer
    }
  }
  for (int depth : {2, 4, 8}) b->Args({0, 1, 2, 2, depth});  // throughput against latency
}

BENCHMARK(BM_Commit)->Apply(Configurations)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fathom::txn

BENCHMARK_MAIN();
