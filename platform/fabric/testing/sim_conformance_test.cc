// The Fabric conformance suite on SimFabric: the peer is another node of the same SimNetwork.
#include <thread>

#include "platform/fabric/sim/sim_fabric.h"
#include "platform/fabric/sim/test_seed.h"
#include "platform/fabric/testing/conformance.h"
#include "platform/fabric/testing/pattern.h"

namespace fathom::fabric::testing {
namespace {

constexpr uint32_t kLocal = 1, kPeer = 2, kAdder = 3;

class SimEnv : public ConformanceEnv {
 public:
  SimEnv() {
    sim::SimOptions options;
    options.seed = sim::TestSeed();
    options.fabric.operation_timeout = absl::Seconds(2);
    options_ = options.fabric;
    network_ = std::make_unique<sim::SimNetwork>(options);
  }
  ~SimEnv() override {
    peer_worker_.reset();
    peer_region_.reset();
    adder_.reset();
    peer_.reset();
    local_.reset();
  }

  absl::Status Start() override {
    auto local = network_->AddNode(kLocal);
    if (!local.ok()) return local.status();
    local_ = std::move(*local);
    auto peer = network_->AddNode(kPeer);
    if (!peer.ok()) return peer.status();
    peer_ = std::move(*peer);
    auto adder = network_->AddNode(kAdder);
    if (!adder.ok()) return adder.status();
    adder_ = std::move(*adder);
    auto region = peer_->AllocateRegion(kPeerRegionBytes);
    if (!region.ok()) return region.status();
    peer_region_ = std::move(*region);
    FillPattern(peer_region_->data(), peer_region_->size());
    auto worker = peer_->CreateWorker();
    if (!worker.ok()) return worker.status();
    peer_worker_ = std::move(*worker);
    return absl::OkStatus();
  }
  Fabric& local() override { return *local_; }
  std::string peer_address() override { return peer_worker_->address(); }
  RegionDescriptor peer_region() override { return peer_region_->descriptor(); }
  void KillPeer() override { network_->Crash(kPeer); }
  absl::Status SilencePeer() override {
    network_->Partition(kLocal, kPeer);
    return absl::OkStatus();
  }
  absl::Status ResumePeer() override {
    network_->Heal(kLocal, kPeer);
    return absl::OkStatus();
  }
  absl::Status RunRemoteAdder(uint64_t offset, int count) override {
    auto worker = adder_->CreateWorker();
    if (!worker.ok()) return worker.status();
    auto ep = (*worker)->Connect(peer_address());
    if (!ep.ok()) return ep.status();
    auto remote = (*ep)->ImportRegion(peer_region());
    if (!remote.ok()) return remote.status();
    for (int i = 0; i < count; ++i) {
      uint64_t old = 0;
      if (absl::Status s = (*ep)->PostFetchAdd(*remote, offset, 1, &old, i); !s.ok()) return s;
      if (absl::Status s = (*ep)->Flush(); !s.ok()) return s;
      std::vector<Completion> done;
      if (absl::Status s = WaitForCompletions(**worker, 1, done, absl::Seconds(30)); !s.ok()) return s;
      if (!done[0].status.ok()) return done[0].status;
    }
    return absl::OkStatus();
  }
  void Advance(absl::Duration d) override { network_->Advance(d); }
  const FabricOptions& options() const override { return options_; }

 private:
  FabricOptions options_;
  std::unique_ptr<sim::SimNetwork> network_;
  std::unique_ptr<Fabric> local_, peer_, adder_;
  std::unique_ptr<Region> peer_region_;
  std::unique_ptr<Worker> peer_worker_;
};

}  // namespace

std::unique_ptr<ConformanceEnv> MakeConformanceEnv() { return std::make_unique<SimEnv>(); }

}  // namespace fathom::fabric::testing
