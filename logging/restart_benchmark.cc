// What a whole-cluster restart costs per byte of log, the parts fathomd runs before it serves:
//   BM_ReadLog        reading and validating a node's log from RocksDB (logging::ReadLog);
//   BM_EncodeSnapshot / BM_DecodeSnapshot  the exchange stream (log_exchange.h), both ends;
//   BM_FetchSnapshot  one node fetching another's log chunk by chunk over UCX shared memory (two nodes
//                     of an embedded cluster in this process, so the same 2 cores serve both ends).
// Each with 100-byte objects; bytes/s is the stream's (or the log's values') bytes.
//
//   bazel run -c opt //logging:restart_benchmark -- --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true        (one command line)
#include <benchmark/benchmark.h>

#include <filesystem>

#include "logging/log_exchange.h"
#include "logging/log_reader.h"
#include "logging/object_log.h"
#include "server/embedded_cluster.h"

namespace fathom::logging {
namespace {

PeerLog MakeLog(uint32_t node, int objects) {
  PeerLog log;
  log.has_log = true;
  log.contents.node_id = node;
  log.contents.position = objects;
  for (int i = 0; i < objects; ++i) {
    ObjectState s;
    s.address = memory::GlobalAddress{(node << 16) | 1, static_cast<uint32_t>(256 * i)};
    s.capacity = 256;
    s.flags = 1;
    s.version = 2;
    s.payload = std::string(100, static_cast<char>('a' + i % 26));
    s.position = i + 1;
    log.contents.states.push_back(std::move(s));
  }
  return log;
}

void BM_ReadLog(benchmark::State& state) {
  const int objects = static_cast<int>(state.range(0));
  const std::string dir = "/tmp/fathom_restart_benchmark/read";
  std::filesystem::remove_all(dir);
  {
    auto log = ObjectLog::Open({.dir = dir, .node_id = 1});
    if (!log.ok()) {
      state.SkipWithError(log.status().ToString().c_str());
      return;
    }
    for (ObjectState& s : MakeLog(1, objects).contents.states) (*log)->Append(std::move(s));
    if (absl::Status s = (*log)->WaitForPersisted(absl::Seconds(60)); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
  }
  for (auto _ : state) {
    auto read = ReadLog(dir, 1);
    if (!read.ok() || read->states.size() != static_cast<size_t>(objects)) {
      state.SkipWithError("ReadLog failed");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations() * objects);
}
BENCHMARK(BM_ReadLog)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_EncodeSnapshot(benchmark::State& state) {
  const PeerLog log = MakeLog(2, static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string stream = EncodeLogSnapshot(log);
    bytes = stream.size();
    benchmark::DoNotOptimize(stream);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_EncodeSnapshot)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_DecodeSnapshot(benchmark::State& state) {
  const std::string stream = EncodeLogSnapshot(MakeLog(2, static_cast<int>(state.range(0))));
  for (auto _ : state) {
    auto log = DecodeLogSnapshot(stream, 2);
    if (!log.ok()) {
      state.SkipWithError(log.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(log);
  }
  state.SetBytesProcessed(state.iterations() * stream.size());
}
BENCHMARK(BM_DecodeSnapshot)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_FetchSnapshot(benchmark::State& state) {
  auto served = std::make_shared<const std::string>(EncodeLogSnapshot(MakeLog(2, static_cast<int>(state.range(0)))));
  server::EmbeddedClusterOptions options;
  options.nodes = 2;
  options.fabric = server::EmbeddedFabric::kUcxSharedMemory;
  options.customize = [served](node::NodeOptions& node) {
    node.register_handlers = [served](msg::Messenger& m, int) { ServeLogSnapshot(m, served); };
  };
  auto cluster = server::EmbeddedCluster::Start(options);
  if (!cluster.ok()) {
    state.SkipWithError(cluster.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    auto log = FetchLogSnapshot((*cluster)->node(1), 2, absl::Seconds(30));
    if (!log.ok()) {
      state.SkipWithError(log.status().ToString().c_str());
      return;
    }
  }
  state.SetBytesProcessed(state.iterations() * served->size());
}
BENCHMARK(BM_FetchSnapshot)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace fathom::logging

BENCHMARK_MAIN();
