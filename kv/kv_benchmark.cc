// kv GET and PUT throughput and latency on a 3-node embedded cluster over UCX shared memory, by value
// size (16 B - 4 KiB), index (hopscotch, cuckoo), table fill (50%, 75%, 90%), with the key's first bucket
// on the measuring node (local) or on another (remote).
// The asynchronous runs issue operations from one node thread with `depth` in flight (how a server
// thread would use the table); the blocking runs issue one call at a time from an application thread
// (each a round trip to a node thread). Counters: ops_per_s (of the one measuring thread), p50/p99
// latency, reads_per_get (one-sided object reads per GET: buckets, out-of-line values, and validation
// re-reads of a miss), one_read_gets (the fraction of GETs that took exactly one read).
//
//   bazel run -c opt //kv:kv_benchmark -- --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//   (add --fabric=tcp for UCX over loopback tcp instead of shared memory)
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "kv/kv.h"
#include "platform/base/mutex.h"
#include "txn/testing/txn_cluster.h"

namespace fathom::kv {
namespace {

constexpr uint64_t kBuckets = 512;  // 4096 slots

// --fabric=tcp runs the cluster over UCX's tcp transport (loopback) instead of shared memory.
server::EmbeddedFabric g_fabric = server::EmbeddedFabric::kUcxSharedMemory;

struct Setup {
  std::unique_ptr<txn::testing::TxnCluster> cluster;
  InProcessCatalog catalog;
};

Setup& GetSetup() {
  static Setup* setup = [] {
    auto* s = new Setup;
    server::EmbeddedClusterOptions options;
    options.nodes = 3;
    options.threads = 2;
    options.memory_bytes = 192 << 20;
    options.fabric = g_fabric;
    auto cluster = txn::testing::TxnCluster::Start(options);
    if (!cluster.ok()) {
      fprintf(stderr, "cluster: %s\n", cluster.status().ToString().c_str());
      abort();
    }
    s->cluster = std::move(*cluster);
    return s;
  }();
  return *setup;
}

// A loaded table, opened on node 1 (the measuring node), and its keys by where their first bucket is.
struct Loaded {
  std::unique_ptr<Table> table;
  std::vector<std::string> local, remote;
};

// The table of `kind` filled to `fill_percent` with values of `size` bytes, created on first use (so a
// --benchmark_filter run loads only what it measures).
Loaded& GetTable(IndexKind kind, int size, int fill_percent) {
  static auto* tables = new std::map<std::tuple<IndexKind, int, int>, Loaded>;
  Loaded& loaded = (*tables)[{kind, size, fill_percent}];
  if (loaded.table != nullptr) return loaded;
  Setup& s = GetSetup();
  const std::string name = absl::StrCat("bench-", static_cast<int>(kind), "-", size, "-", fill_percent);
  auto table = Table::Create(s.cluster->service(1), s.catalog, name, {.kind = kind, .buckets = kBuckets});
  if (!table.ok()) abort();
  const int keys = static_cast<int>(kBuckets * kSlotsPerBucket * fill_percent / 100);
  for (int i = 0; i < keys; ++i) {
    std::string key = absl::StrCat("user", i);
    if (absl::Status put = table->Put(key, std::string(size, 'v')); !put.ok()) {
      fprintf(stderr, "loading %s: %s\n", name.c_str(), put.ToString().c_str());
      abort();
    }
    (table->HomeNode(key) == 1 ? loaded.local : loaded.remote).push_back(std::move(key));
  }
  loaded.table = std::make_unique<Table>(*table);
  return loaded;
}

struct LoopResult {
  double ops_per_s = 0;
  double p50_us = 0, p99_us = 0;
  double reads_per_get = 0;
  double one_read_gets = 0;  // fraction of GETs served by one read
  uint64_t failed = 0;
  absl::Status first_failure;
};

// Operations whose latency is measured: one in this many (p50/p99 from 25,000 of a run's 200,000).
constexpr uint64_t kLatencySample = 8;

// `depth` operations in flight on node 1's thread 0 until `count` finished.
LoopResult RunAsync(const Table& table, const std::vector<std::string>& keys, const std::string& value, bool put,
                    int depth, int count) {
  struct Loop : std::enable_shared_from_this<Loop> {
    txn::TxnThread* thread = nullptr;
    const Table* table;
    const std::vector<std::string>* keys;
    std::string value;
    bool put;
    int left_to_start;
    int depth = 1;
    int in_flight = 0;
    bool filling = false;  // inside Fill: a finish that came synchronously only makes room
    uint64_t next = 0, reads = 0, gets = 0, one_read = 0, failed = 0;
    absl::Status first_failure;
    std::vector<double> latencies;
    absl::Mutex mu;
    bool done ABSL_GUARDED_BY(mu) = false;

    // Keeps `depth` operations in flight. A loop, not a recursion through Finished: a local GET finishes
    // inside the call that started it, and recursing would nest every remaining GET of the run.
    void Fill() {
      if (filling) return;
      filling = true;
      while (in_flight < depth && left_to_start > 0) StartOne();
      filling = false;
    }
    void StartOne() {
      --left_to_start;
      ++in_flight;
      // Latency of every kLatencySample-th operation: two clock reads per GET were ~10% of its cost.
      const absl::Time began = next % kLatencySample == 0 ? absl::Now() : absl::InfinitePast();
      const std::string& key = (*keys)[(next++ * 7919) % keys->size()];
      auto self = shared_from_this();
      if (put) {
        table->PutAsync(*thread, key, value, [self, began](absl::Status s) {
          if (!s.ok() && self->first_failure.ok()) self->first_failure = s;
          self->Finished(s.ok(), began, 0);
        });
      } else {
        table->GetAsync(*thread, key, [self, began](GetResult r) { self->Finished(r.value.ok(), began, r.reads); });
      }
    }
    void Finished(bool ok, absl::Time began, int r) {
      if (began != absl::InfinitePast()) latencies.push_back(absl::ToDoubleMicroseconds(absl::Now() - began));
      if (!ok) ++failed;
      reads += r;
      one_read += r == 1;
      ++gets;
      --in_flight;
      if (left_to_start > 0) return Fill();
      if (in_flight == 0) {
        MutexLock lock(&mu);
        done = true;
      }
    }
  };
  auto loop = std::make_shared<Loop>();
  loop->table = &table;
  loop->keys = &keys;
  loop->value = value;
  loop->put = put;
  loop->left_to_start = count;
  loop->depth = depth;
  loop->latencies.reserve(count);
  const absl::Time start = absl::Now();
  auto posted = GetSetup().cluster->service(1).Post(0, [loop](txn::TxnThread& t) {
    loop->thread = &t;
    loop->Fill();
  });
  if (!posted.ok()) abort();
  {
    MutexLock lock(&loop->mu);
    TsanRelease(&loop->mu);
    loop->mu.Await(absl::Condition(&loop->done));
    TsanAcquire(&loop->mu);
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  LoopResult r;
  r.ops_per_s = count / seconds;
  std::sort(loop->latencies.begin(), loop->latencies.end());
  r.p50_us = loop->latencies[loop->latencies.size() / 2];
  r.p99_us = loop->latencies[loop->latencies.size() * 99 / 100];
  r.reads_per_get = put ? 0 : static_cast<double>(loop->reads) / loop->gets;
  r.one_read_gets = put ? 0 : static_cast<double>(loop->one_read) / loop->gets;
  r.failed = loop->failed;
  r.first_failure = loop->first_failure;
  return r;
}

void Report(benchmark::State& state, const LoopResult& r, int count) {
  if (r.failed > 0) state.SkipWithError(absl::StrCat(r.failed, " failed, first: ", r.first_failure.ToString()).c_str());
  state.counters["ops_per_s"] = r.ops_per_s;
  state.counters["p50_us"] = r.p50_us;
  state.counters["p99_us"] = r.p99_us;
  if (r.reads_per_get > 0) {
    state.counters["reads_per_get"] = r.reads_per_get;
    state.counters["one_read_gets"] = r.one_read_gets;
  }
  state.SetItemsProcessed(state.iterations() * count);
}

// Args: value bytes, local (1) or remote (0) first bucket, depth, index kind (1 hopscotch, 2 cuckoo),
// fill percent.
Loaded& TableFor(const benchmark::State& state) {
  return GetTable(static_cast<IndexKind>(state.range(3)), static_cast<int>(state.range(0)),
                  static_cast<int>(state.range(4)));
}
const std::vector<std::string>& KeysFor(const benchmark::State& state, const Loaded& loaded) {
  return state.range(1) ? loaded.local : loaded.remote;
}

void BM_GetAsync(benchmark::State& state) {
  Loaded& loaded = TableFor(state);
  const auto& keys = KeysFor(state, loaded);
  const Table* table = loaded.table.get();
  constexpr int kCount = 200000;
  LoopResult r;
  for (auto _ : state) {
    r = RunAsync(*table, keys, "", false, static_cast<int>(state.range(2)), kCount);
    state.SetIterationTime(kCount / r.ops_per_s);
  }
  Report(state, r, kCount);
}

void BM_PutAsync(benchmark::State& state) {
  Loaded& loaded = TableFor(state);
  const auto& keys = KeysFor(state, loaded);
  const Table* table = loaded.table.get();
  const int size = static_cast<int>(state.range(0));
  constexpr int kCount = 10000;
  LoopResult r;
  for (auto _ : state) {
    r = RunAsync(*table, keys, std::string(size, 'w'), true, static_cast<int>(state.range(2)), kCount);
    state.SetIterationTime(kCount / r.ops_per_s);
  }
  Report(state, r, kCount);
}

// GETs of every key of the 50%-full 100-byte table while a thread on node 2 resizes it to 1024 buckets
// and back, again and again: each resize rejects GETs only between retiring the old buckets and
// publishing the new ones. The table is back at kBuckets afterwards. Args as above (local is ignored:
// a resize moves keys between nodes).
void BM_GetAsyncDuringResize(benchmark::State& state) {
  Loaded& loaded = TableFor(state);
  std::vector<std::string> keys = loaded.local;
  keys.insert(keys.end(), loaded.remote.begin(), loaded.remote.end());
  const Table* table = loaded.table.get();
  Setup& s = GetSetup();
  constexpr int kCount = 1000000;  // long enough for several resizes
  LoopResult r;
  std::atomic<int> resizes{0};
  absl::Duration resizing;  // written by the resizer, read after it is joined
  for (auto _ : state) {
    std::atomic<bool> stop{false};
    std::thread resizer([&] {
      for (int i = 0; !stop.load(); ++i) {
        const uint64_t buckets = i % 2 == 0 ? 2 * kBuckets : kBuckets;
        const absl::Time began = absl::Now();
        if (Table::Resize(s.cluster->service(2), s.catalog, table->name(),
                          {.buckets = buckets, .grace = absl::Milliseconds(5)}).ok()) {
          ++resizes;
          resizing += absl::Now() - began;
        }
      }
    });
    r = RunAsync(*table, keys, "", false, static_cast<int>(state.range(2)), kCount);
    stop = true;
    resizer.join();
    state.SetIterationTime(kCount / r.ops_per_s);
  }
  if (table->buckets() != kBuckets &&
      !Table::Resize(s.cluster->service(2), s.catalog, table->name(), {.buckets = kBuckets}).ok()) {
    state.SkipWithError("could not resize back");
  }
  Report(state, r, kCount);
  state.counters["resizes"] = resizes.load();
  // Wall time per resize, freeze to free (5 ms grace included): PUT/DELETE wait for most of it.
  if (resizes.load() > 0) state.counters["resize_ms"] = absl::ToDoubleMilliseconds(resizing) / resizes.load();
}

// One call at a time from this (application) thread. Args as above.
void BM_GetBlocking(benchmark::State& state) {
  Loaded& loaded = TableFor(state);
  const auto& keys = KeysFor(state, loaded);
  const Table* table = loaded.table.get();
  uint64_t i = 0;
  for (auto _ : state) {
    if (!table->Get(keys[(i++ * 7919) % keys.size()]).ok()) state.SkipWithError("get failed");
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_PutBlocking(benchmark::State& state) {
  Loaded& loaded = TableFor(state);
  const auto& keys = KeysFor(state, loaded);
  const Table* table = loaded.table.get();
  const int size = static_cast<int>(state.range(0));
  const std::string value(size, 'b');
  uint64_t i = 0;
  for (auto _ : state) {
    if (!table->Put(keys[(i++ * 7919) % keys.size()], value).ok()) state.SkipWithError("put failed");
  }
  state.SetItemsProcessed(state.iterations());
}

constexpr int kHop = static_cast<int>(IndexKind::kHopscotch);
constexpr int kCuckoo = static_cast<int>(IndexKind::kCuckoo);

void AsyncArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"bytes", "local", "depth", "index", "fill"});
  for (int kind : {kHop, kCuckoo}) {
    for (int size : {16, 100, 1024, 4096}) {
      for (int local : {1, 0}) b->Args({size, local, 8, kind, 50});
    }
  }
  for (int depth : {1, 4, 16}) b->Args({100, 0, depth, kHop, 50});
}

// GETs only: how the reads per GET grow with the fill.
void FillArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"bytes", "local", "depth", "index", "fill"});
  for (int kind : {kHop, kCuckoo}) {
    for (int fill : {75, 90}) b->Args({100, 0, 8, kind, fill});
  }
}

void ResizeArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"bytes", "local", "depth", "index", "fill"});
  for (int kind : {kHop, kCuckoo}) b->Args({100, 0, 8, kind, 50});
}

void BlockingArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"bytes", "local", "depth", "index", "fill"});
  for (int kind : {kHop, kCuckoo}) {
    for (int size : {16, 100, 4096}) {
      for (int local : {1, 0}) b->Args({size, local, 1, kind, 50});
    }
  }
}

BENCHMARK(BM_GetAsync)->Apply(AsyncArgs)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GetAsync)->Name("BM_GetAsyncByFill")->Apply(FillArgs)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GetAsyncDuringResize)->Apply(ResizeArgs)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PutAsync)->Apply(AsyncArgs)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GetBlocking)->Apply(BlockingArgs)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PutBlocking)->Apply(BlockingArgs)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace fathom::kv

int main(int argc, char** argv) {
  // Our one flag, taken out before Google Benchmark sees the rest.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--fabric=tcp") {
      fathom::kv::g_fabric = fathom::server::EmbeddedFabric::kUcxTcp;
    } else if (arg == "--fabric=shm") {
      fathom::kv::g_fabric = fathom::server::EmbeddedFabric::kUcxSharedMemory;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
