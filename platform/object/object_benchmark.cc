// Object reads by object size: local (the owner's own memory), remote over UCX shared memory, and
// remote over tcp, each a full read: copy, check the checksum, retry if torn (nothing races here).
//
//   bazel run -c opt //platform/object:object_benchmark -- --benchmark_repetitions=3
#include <cstring>
#include <map>
#include <memory>

#include "benchmark/benchmark.h"
#include "platform/base/hex.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/fabric/testing/ucx_env.h"
#include "platform/object/object_reader.h"
#include "platform/object/object_store.h"

namespace fathom::object {
namespace {

constexpr uint32_t kPayloadSizes[] = {32, 200, 1000, 4000, 16000, 65000};  // as object_peer allocates them

struct RemotePeer {
  std::unique_ptr<fabric::testing::UcxPeerEnv> env;
  fabric::testing::PeerLink link;
  std::vector<ObjectRef> refs;  // object_peer's objects, kPayloadSizes in order
};

RemotePeer* GetPeer(const std::string& transports) {
  static auto* peers = new std::map<std::string, std::unique_ptr<RemotePeer>>();
  auto& slot = (*peers)[transports];
  if (slot != nullptr) return slot.get();
  auto peer = std::make_unique<RemotePeer>();
  peer->env = std::make_unique<fabric::testing::UcxPeerEnv>(
      transports, "platform/object/object_peer", std::vector<std::string>{"--writers=0", "--objects_per_size=1"});
  if (!peer->env->Start().ok() || peer->env->ready_extra().size() != 1) return nullptr;
  std::string bytes;
  if (!HexToBytes(peer->env->ready_extra()[0], &bytes)) return nullptr;
  for (size_t i = 0; i + 16 <= bytes.size(); i += 16) {
    uint64_t raw;
    ObjectRef ref;
    std::memcpy(&raw, bytes.data() + i, 8);
    std::memcpy(&ref.incarnation, bytes.data() + i + 8, 4);
    std::memcpy(&ref.capacity, bytes.data() + i + 12, 4);
    ref.address = memory::GlobalAddress::FromRaw(raw);
    peer->refs.push_back(ref);
  }
  auto link = peer->env->ConnectToPeer();
  if (!link.ok()) return nullptr;
  peer->link = std::move(*link);
  slot = std::move(peer);
  return slot.get();
}

void BM_LocalRead(benchmark::State& state) {
  fabric::sim::SimNetwork network;  // only to register the region
  auto fabric = network.AddNode(1);
  auto region = memory::LocalRegion::Allocate(**fabric, 1, 1, 8 << 20);
  memory::SlabSource source({region->get()});
  memory::SlabAllocator allocator(&source);
  ObjectStore store({region->get()}, &allocator);
  auto ref = store.Allocate(kPayloadSizes[state.range(0)]);
  std::vector<std::byte> payload(ref->payload_capacity(), std::byte{7}), buffer;
  if (!store.Write(*ref, payload).ok()) state.SkipWithError("write failed");
  for (auto _ : state) {
    auto read = store.Read(*ref, buffer);
    benchmark::DoNotOptimize(read);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * ref->capacity);
  state.SetLabel(absl::StrCat(ref->capacity, "-byte slot"));
}

void RemoteRead(benchmark::State& state, const char* transports) {
  RemotePeer* peer = GetPeer(transports);
  if (peer == nullptr) {
    state.SkipWithError("could not start object_peer");
    return;
  }
  const ObjectRef& ref = peer->refs[state.range(0)];
  std::vector<std::byte> buffer;
  ReadPolicy policy;
  for (auto _ : state) {
    auto read = ReadRemoteObject(*peer->link.worker, *peer->link.endpoint, peer->link.remote, ref, buffer, policy,
                                 nullptr);
    if (!read.ok()) {
      state.SkipWithError(read.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(read);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * ref.capacity);
  state.SetLabel(absl::StrCat(ref.capacity, "-byte slot"));
}

void BM_RemoteRead(benchmark::State& state, const char* transports) { RemoteRead(state, transports); }

BENCHMARK(BM_LocalRead)->DenseRange(0, 5);
BENCHMARK_CAPTURE(BM_RemoteRead, shm, "sm")->DenseRange(0, 5);
BENCHMARK_CAPTURE(BM_RemoteRead, tcp, "tcp")->DenseRange(0, 5);

}  // namespace
}  // namespace fathom::object

BENCHMARK_MAIN();
