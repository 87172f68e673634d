// One-sided Read/Write latency and throughput over UCX shared memory and tcp, by size, batched and
// unbatched, next to a local memcpy of the same size (the physical limit), all in one run.
//
//   bazel run -c opt //platform/fabric:fabric_benchmark -- --benchmark_repetitions=3
//
// Each benchmark process starts one fabric_peer per transport that serves its region.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "platform/fabric/testing/pattern.h"
#include "platform/fabric/testing/ucx_env.h"

namespace fathom::fabric {
namespace {

struct Peer {
  std::unique_ptr<testing::UcxPeerEnv> env;
  testing::PeerLink link;
};

// One peer process per transport, started on first use and kept for the whole run.
testing::PeerLink* GetPeer(const std::string& transports) {
  static auto* peers = new std::map<std::string, std::unique_ptr<Peer>>();
  auto& slot = (*peers)[transports];
  if (slot != nullptr) return &slot->link;
  auto peer = std::make_unique<Peer>();
  peer->env = std::make_unique<testing::UcxPeerEnv>(transports);
  if (!peer->env->Start().ok()) return nullptr;
  auto link = peer->env->ConnectToPeer();
  if (!link.ok()) return nullptr;
  peer->link = std::move(*link);
  slot = std::move(peer);
  return &slot->link;
}

void BM_LocalMemcpy(benchmark::State& state) {
  const size_t size = state.range(0);
  // Sources spread over 32 MiB like the remote reads below, so both miss caches alike.
  std::vector<uint8_t> source(testing::kPeerRegionBytes, 1), destination(size);
  uint64_t offset = 0;
  for (auto _ : state) {
    std::memcpy(destination.data(), source.data() + offset, size);
    benchmark::DoNotOptimize(destination.data());
    benchmark::ClobberMemory();
    offset = (offset + 4096) % (testing::kPeerRegionBytes - size);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * size);
}

// Args: size, batch. Posts `batch` operations, flushes once, polls until all complete.
void OneSided(benchmark::State& state, OpType type, const char* transports) {
  testing::PeerLink* peer = GetPeer(transports);
  if (peer == nullptr) {
    state.SkipWithError("could not start fabric_peer");
    return;
  }
  const size_t size = state.range(0);
  const int batch = static_cast<int>(state.range(1));
  std::vector<uint8_t> buffer(size * batch, 7);
  std::vector<double> latencies_us;
  Completion done[64];
  uint64_t offset = 0;
  const uint64_t span = testing::kPeerRegionBytes - size * batch;
  uint64_t iteration = 0;
  for (auto _ : state) {
    // Latency is sampled on every 16th unbatched iteration so the clock reads barely touch throughput.
    const bool sample = batch == 1 && (++iteration & 15) == 0;
    const absl::Time start = sample ? absl::Now() : absl::InfinitePast();
    for (int i = 0; i < batch; ++i) {
      absl::Status s = type == OpType::kRead
                           ? peer->endpoint->PostRead(peer->remote, offset + i * size, &buffer[i * size], size, i)
                           : peer->endpoint->PostWrite(peer->remote, offset + i * size, &buffer[i * size], size, i);
      if (!s.ok()) {
        state.SkipWithError(s.ToString().c_str());
        return;
      }
    }
    if (!peer->endpoint->Flush().ok()) {
      state.SkipWithError("flush failed");
      return;
    }
    for (int got = 0; got < batch;) {
      size_t n = peer->worker->Poll(done);
      for (size_t i = 0; i < n; ++i) {
        if (!done[i].status.ok()) {
          state.SkipWithError(done[i].status.ToString().c_str());
          return;
        }
      }
      got += static_cast<int>(n);
    }
    if (sample) latencies_us.push_back(absl::ToDoubleMicroseconds(absl::Now() - start));
    offset = (offset + 4096) % span;
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.SetBytesProcessed(state.iterations() * batch * size);
  if (!latencies_us.empty()) {
    std::sort(latencies_us.begin(), latencies_us.end());
    state.counters["p50_us"] = latencies_us[latencies_us.size() / 2];
    state.counters["p99_us"] = latencies_us[latencies_us.size() * 99 / 100];
  }
}

void SizesAndBatches(benchmark::internal::Benchmark* b) {
  for (int64_t size : {8, 64, 512, 4096, 65536}) {
    for (int64_t batch : {1, 16}) b->Args({size, batch});
  }
}

BENCHMARK(BM_LocalMemcpy)->Arg(8)->Arg(64)->Arg(512)->Arg(4096)->Arg(65536);
void BM_Read(benchmark::State& state, const char* transports) { OneSided(state, OpType::kRead, transports); }
void BM_Write(benchmark::State& state, const char* transports) { OneSided(state, OpType::kWrite, transports); }

BENCHMARK_CAPTURE(BM_Read, shm, "sm")->Apply(SizesAndBatches);
BENCHMARK_CAPTURE(BM_Write, shm, "sm")->Apply(SizesAndBatches);
BENCHMARK_CAPTURE(BM_Read, tcp, "tcp")->Apply(SizesAndBatches);
BENCHMARK_CAPTURE(BM_Write, tcp, "tcp")->Apply(SizesAndBatches);

}  // namespace
}  // namespace fathom::fabric

BENCHMARK_MAIN();
