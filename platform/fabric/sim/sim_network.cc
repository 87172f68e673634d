// SimNetwork and the topology side of SimCore: nodes, partitions, crashes, and the registries of regions,
// workers and endpoints.
#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "platform/fabric/sim/sim_core.h"
#include "platform/fabric/sim/sim_objects.h"

namespace fathom::fabric::sim {
namespace internal {

namespace {

// Distinguishes networks within one process (see sim_keys.h). Not part of any schedule, so it does not
// affect replay.
uint64_t NextNetworkId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// Repairs nonsensical knobs instead of failing: the constructor has no way to report an error.
SimOptions Sanitized(SimOptions options) {
  options.min_latency = std::max(options.min_latency, absl::ZeroDuration());
  options.max_latency = std::max(options.max_latency, options.min_latency);
  options.max_torn_chunk = std::max<size_t>(options.max_torn_chunk, 1);
  options.drop_probability = std::clamp(options.drop_probability, 0.0, 1.0);
  if (options.fabric.operation_timeout <= absl::ZeroDuration()) options.fabric.operation_timeout = absl::Seconds(5);
  return options;
}

std::pair<uint32_t, uint32_t> PairKey(uint32_t a, uint32_t b) { return {std::min(a, b), std::max(a, b)}; }

}  // namespace

SimCore::SimCore(const SimOptions& options)
    : options_(Sanitized(options)),
      network_id_(NextNetworkId()),
      torn_window_(options_.max_latency),
      now_(clock_.Now()),
      rng_(options_.seed),
      drop_probability_(options_.drop_probability) {}

absl::Status SimCore::AddNode(uint32_t node) {
  CoreLock lock(&mu_);
  if (!nodes_.emplace(node, NodeState{}).second) {
    return absl::AlreadyExistsError(absl::StrCat("node ", node, " already exists in this SimNetwork"));
  }
  return absl::OkStatus();
}

void SimCore::Partition(uint32_t a, uint32_t b, absl::Duration heal_after) {
  CoreLock lock(&mu_);
  partitions_[PairKey(a, b)] = heal_after == absl::InfiniteDuration() ? absl::InfiniteFuture() : now_ + heal_after;
}

void SimCore::Heal(uint32_t a, uint32_t b) {
  CoreLock lock(&mu_);
  partitions_.erase(PairKey(a, b));
}

bool SimCore::Partitioned(uint32_t a, uint32_t b) const {
  if (partitions_.empty()) return false;
  auto it = partitions_.find(PairKey(a, b));
  return it != partitions_.end() && now_ < it->second;
}

void SimCore::Crash(uint32_t node) {
  CoreLock lock(&mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.crashed) return;
  it->second.crashed = true;
  const absl::Status crashed = absl::UnavailableError(absl::StrCat("node ", node, " crashed"));
  for (auto& [id, endpoint] : endpoints_) {
    if (endpoint.node == node || endpoint.peer == node) FailEndpoint(id, crashed, crashed);
  }
}

absl::Status SimCore::NodesUp(const EndpointState& endpoint) const {
  for (uint32_t node : {endpoint.node, endpoint.peer}) {
    auto it = nodes_.find(node);
    if (it != nodes_.end() && it->second.crashed) {
      return absl::UnavailableError(absl::StrCat("node ", node, " crashed"));
    }
  }
  return absl::OkStatus();
}

void SimCore::SetDropProbability(double p) {
  CoreLock lock(&mu_);
  drop_probability_ = std::clamp(p, 0.0, 1.0);
}

SimNetwork::Stats SimCore::stats() const {
  CoreLock lock(&mu_);
  return stats_;
}

RegionId SimCore::RegisterRegion(uint32_t node, std::byte* data, size_t size) {
  CoreLock lock(&mu_);
  RegionId id;
  id.node = node;
  id.region = nodes_[node].regions_created++;
  id.generation = next_generation_++;
  regions_[{id.node, id.region}] = RegionEntry{data, size, id.generation};
  return id;
}

void SimCore::DeregisterRegion(const RegionId& id) {
  CoreLock lock(&mu_);
  // After this no event can reach the memory: events look the region up under mu_ each time they run.
  auto it = regions_.find({id.node, id.region});
  if (it != regions_.end() && it->second.generation == id.generation) regions_.erase(it);
}

RegionEntry* SimCore::FindRegion(const RegionId& id) {
  auto it = regions_.find({id.node, id.region});
  if (it == regions_.end() || it->second.generation != id.generation) return nullptr;
  return &it->second;
}

uint64_t SimCore::CreateWorker(uint32_t node, uint32_t* index) {
  CoreLock lock(&mu_);
  *index = nodes_[node].workers_created++;
  const uint64_t key = (uint64_t{node} << 32) | *index;
  workers_[key].node = node;
  return key;
}

void SimCore::DestroyWorker(uint64_t worker) {
  CoreLock lock(&mu_);
  auto it = workers_.find(worker);
  if (it == workers_.end()) return;
  // Endpoints should go first; fail any that remain so their operations end (their completions have
  // nowhere to go).
  const absl::Status destroyed = absl::CancelledError("worker destroyed");
  for (uint64_t endpoint : it->second.endpoints) FailEndpoint(endpoint, destroyed, destroyed);
  workers_.erase(it);
}

WorkerState* SimCore::FindWorker(uint64_t worker) {
  auto it = workers_.find(worker);
  return it == workers_.end() ? nullptr : &it->second;
}

absl::StatusOr<uint64_t> SimCore::Connect(uint64_t worker, uint32_t peer_node, uint32_t peer_worker) {
  CoreLock lock(&mu_);
  auto node = nodes_.find(peer_node);
  if (node == nodes_.end()) return absl::NotFoundError(absl::StrCat("no node ", peer_node, " in this SimNetwork"));
  if (peer_worker >= node->second.workers_created) {
    return absl::NotFoundError(absl::StrCat("node ", peer_node, " has no worker ", peer_worker));
  }
  WorkerState* self = FindWorker(worker);
  if (self == nullptr) return absl::FailedPreconditionError("Connect on a destroyed worker");
  const uint64_t id = next_endpoint_++;
  EndpointState& endpoint = endpoints_[id];
  endpoint.worker = worker;
  endpoint.node = self->node;
  endpoint.peer = peer_node;
  self->endpoints.insert(id);
  return id;
}

void SimCore::DestroyEndpoint(uint64_t endpoint) {
  CoreLock lock(&mu_);
  auto it = endpoints_.find(endpoint);
  if (it == endpoints_.end()) return;
  const absl::Status closed = absl::CancelledError("endpoint closed");
  FailEndpoint(endpoint, closed, closed);
  if (WorkerState* worker = FindWorker(it->second.worker)) worker->endpoints.erase(endpoint);
  endpoints_.erase(it);
}

void SimCore::ShutdownEndpoint(uint64_t endpoint) {
  CoreLock lock(&mu_);
  if (!endpoints_.contains(endpoint)) return;
  const absl::Status closed = absl::CancelledError("endpoint closed");
  FailEndpoint(endpoint, closed, closed);
}

absl::Status SimCore::Health(uint64_t endpoint) const {
  CoreLock lock(&mu_);
  auto it = endpoints_.find(endpoint);
  if (it == endpoints_.end()) return absl::CancelledError("endpoint closed");
  return it->second.health;
}

}  // namespace internal

SimNetwork::SimNetwork(SimOptions options) : core_(std::make_unique<internal::SimCore>(options)) {}
SimNetwork::~SimNetwork() = default;

absl::StatusOr<std::unique_ptr<Fabric>> SimNetwork::AddNode(uint32_t node_id) {
  if (absl::Status s = core_->AddNode(node_id); !s.ok()) return s;
  return std::unique_ptr<Fabric>(std::make_unique<internal::SimNode>(core_.get(), node_id));
}

void SimNetwork::Partition(uint32_t a, uint32_t b, absl::Duration heal_after) {
  core_->Partition(a, b, heal_after);
}
void SimNetwork::Heal(uint32_t a, uint32_t b) { core_->Heal(a, b); }
void SimNetwork::Crash(uint32_t node_id) { core_->Crash(node_id); }
void SimNetwork::set_drop_probability(double p) { core_->SetDropProbability(p); }
uint64_t SimNetwork::seed() const { return core_->seed(); }
const Clock& SimNetwork::clock() const { return core_->clock(); }
size_t SimNetwork::RunUntilIdle() { return core_->RunUntilIdle(); }
void SimNetwork::Advance(absl::Duration d) { core_->Advance(d); }
SimNetwork::Stats SimNetwork::stats() const { return core_->stats(); }

}  // namespace fathom::fabric::sim
