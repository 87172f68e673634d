// RPC round trip, pipelined RPC throughput and one-way message throughput over UCX shared memory and tcp,
// by message size and batch size. Two nodes in this process, each a thread with its own worker: the
// benchmark thread is the client (node 1); a server thread (node 2) polls all the time. Both busy-poll.
//
//   bazel run -c opt //platform/msg:msg_benchmark -- --benchmark_repetitions=3
//
// Targets (issue 3, shm, both threads polling): small-RPC round trip median <= 5 us; >= 1 million small
// one-way messages per second per thread pair with batching.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "platform/msg/messenger.h"
#include "platform/msg/ucx_pair.h"

namespace fathom::msg {
namespace {

constexpr MessageType kEcho = 1;
constexpr MessageType kNote = 2;
constexpr uint32_t kRingBytes = 64 << 10;

struct Setup {
  std::unique_ptr<testing::UcxMsgPair> pair;
  std::atomic<uint64_t> notes{0};  // one-way messages node 2 has handled
};

// One pair per transport, made on first use and kept for the whole run.
Setup* GetSetup(const std::string& transports) {
  static auto* setups = new std::map<std::string, std::unique_ptr<Setup>>();
  auto& slot = (*setups)[transports];
  if (slot != nullptr) return slot.get();
  auto setup = std::make_unique<Setup>();
  auto pair = testing::UcxMsgPair::Create(transports, kRingBytes);
  if (!pair.ok()) return nullptr;
  setup->pair = std::move(*pair);
  Messenger& server = setup->pair->messenger(2);
  if (!server.Register(kEcho, [](const Message& m, std::string* reply) {
        reply->assign(m.payload);
        return absl::OkStatus();
      }).ok()) {
    return nullptr;
  }
  std::atomic<uint64_t>* notes = &setup->notes;
  if (!server.Register(kNote, [notes](const Message&, std::string*) {
        notes->fetch_add(1, std::memory_order_relaxed);
        return absl::OkStatus();
      }).ok()) {
    return nullptr;
  }
  slot = std::move(setup);
  return slot.get();
}

// Node 2's thread, polling its worker and messenger until destroyed.
class Server {
 public:
  explicit Server(testing::UcxMsgPair& pair)
      : thread_([this, &pair] {
          while (!stop_.load(std::memory_order_relaxed)) PollWorkerAndMessenger(pair.worker(2), pair.messenger(2));
        }) {}
  ~Server() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// Args: request size. One call at a time: Call, Flush, poll until the reply.
void BM_RoundTrip(benchmark::State& state, const char* transports) {
  Setup* setup = GetSetup(transports);
  if (setup == nullptr) {
    state.SkipWithError("could not set up the UCX pair");
    return;
  }
  Server server(*setup->pair);
  Messenger& m = setup->pair->messenger(1);
  fabric::Worker& w = setup->pair->worker(1);
  const std::string request(state.range(0), 'r');
  std::vector<double> micros;
  micros.reserve(1 << 20);
  bool done = false, ok = true;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    done = false;
    absl::Status s = m.Call(2, kEcho, request, absl::Seconds(5), [&done, &ok](absl::StatusOr<std::string_view> r) {
      done = true;
      ok = r.ok();
    });
    if (s.ok()) s = m.Flush();
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
    while (!done) PollWorkerAndMessenger(w, m);
    if (!ok) {
      state.SkipWithError("call failed");
      return;
    }
    if (micros.size() < micros.capacity()) {
      micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["p50_us"] = Percentile(micros, 0.5);
  state.counters["p99_us"] = Percentile(micros, 0.99);
}

// Args: request size, window. Keeps `window` calls in flight, flushing when the window is full.
void BM_RpcThroughput(benchmark::State& state, const char* transports) {
  Setup* setup = GetSetup(transports);
  if (setup == nullptr) {
    state.SkipWithError("could not set up the UCX pair");
    return;
  }
  Server server(*setup->pair);
  Messenger& m = setup->pair->messenger(1);
  fabric::Worker& w = setup->pair->worker(1);
  const std::string request(state.range(0), 'r');
  const int64_t window = state.range(1);
  int64_t outstanding = 0, failed = 0, queued = 0;
  auto done = [&outstanding, &failed](absl::StatusOr<std::string_view> r) {
    --outstanding;
    if (!r.ok()) ++failed;
  };
  for (auto _ : state) {
    while (outstanding >= window) PollWorkerAndMessenger(w, m);
    absl::Status s;
    while (absl::IsResourceExhausted(s = m.Call(2, kEcho, request, absl::Seconds(5), done))) {
      PollWorkerAndMessenger(w, m);
    }
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
    ++outstanding;
    if (++queued == window) {
      m.Flush().IgnoreError();
      queued = 0;
    }
  }
  m.Flush().IgnoreError();
  while (outstanding > 0) PollWorkerAndMessenger(w, m);
  if (failed > 0) state.SkipWithError("calls failed");
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

// Args: message size, batch. Queues `batch` one-way messages, flushes once (one PostWrite), polls once.
void BM_OneWay(benchmark::State& state, const char* transports) {
  Setup* setup = GetSetup(transports);
  if (setup == nullptr) {
    state.SkipWithError("could not set up the UCX pair");
    return;
  }
  Server server(*setup->pair);
  Messenger& m = setup->pair->messenger(1);
  fabric::Worker& w = setup->pair->worker(1);
  const std::string message(state.range(0), 'n');
  const int64_t batch = state.range(1);
  const uint64_t before = setup->notes.load();
  uint64_t sent = 0;
  for (auto _ : state) {
    for (int64_t i = 0; i < batch;) {
      absl::Status s = m.Send(2, kNote, message);
      if (s.ok()) {
        ++i;
        ++sent;
      } else if (absl::IsResourceExhausted(s)) {
        PollWorkerAndMessenger(w, m);  // flushes, and reads the head the server wrote back
      } else {
        state.SkipWithError(s.ToString().c_str());
        return;
      }
    }
    m.Flush().IgnoreError();
    PollWorkerAndMessenger(w, m);
  }
  // Count only what arrived (at most one ring is still in flight here).
  while (setup->notes.load() - before < sent) PollWorkerAndMessenger(w, m);
  state.SetItemsProcessed(sent);
  state.SetBytesProcessed(sent * state.range(0));
}

void RoundTripSizes(benchmark::internal::Benchmark* b) {
  for (int64_t size : {8, 64, 512, 4096}) b->Arg(size);
}
void RpcWindows(benchmark::internal::Benchmark* b) {
  for (int64_t size : {8, 512}) {
    for (int64_t window : {1, 16, 64}) b->Args({size, window});
  }
}
void OneWayBatches(benchmark::internal::Benchmark* b) {
  for (int64_t size : {8, 64, 512, 4096}) {
    for (int64_t batch : {1, 16, 64}) b->Args({size, batch});
  }
}

BENCHMARK_CAPTURE(BM_RoundTrip, shm, "sm")->Apply(RoundTripSizes)->UseRealTime();
BENCHMARK_CAPTURE(BM_RpcThroughput, shm, "sm")->Apply(RpcWindows)->UseRealTime();
BENCHMARK_CAPTURE(BM_OneWay, shm, "sm")->Apply(OneWayBatches)->UseRealTime();
BENCHMARK_CAPTURE(BM_RoundTrip, tcp, "tcp")->Apply(RoundTripSizes)->UseRealTime();
BENCHMARK_CAPTURE(BM_RpcThroughput, tcp, "tcp")->Apply(RpcWindows)->UseRealTime();
BENCHMARK_CAPTURE(BM_OneWay, tcp, "tcp")->Apply(OneWayBatches)->UseRealTime();

}  // namespace
}  // namespace fathom::msg

BENCHMARK_MAIN();
