#include "tests/sim/sim_cluster.h"

#include <xxhash.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "coordinator/admission.h"
#include "coordinator/membership.h"
#include "coordinator/placement.h"

namespace fathom::sim {
namespace {

constexpr char kToken[] = "sim-cluster-token-0123456789abcdef";

}  // namespace

SimCluster::SimCluster(const SimClusterOptions& options) : options_(options) {}

SimCluster::~SimCluster() {
  // Nodes stop (and their threads tear down) while the scheduler and the network still exist.
  services_.clear();
  for (auto& node : nodes_) node->Stop();
  nodes_.clear();
}

absl::StatusOr<std::unique_ptr<SimCluster>> SimCluster::Start(const SimClusterOptions& options) {
  if (options.nodes < 1 || options.threads_per_node < 1 || options.backups < 0) {
    return absl::InvalidArgumentError("a simulated cluster needs nodes, threads and f >= 0");
  }
  std::unique_ptr<SimCluster> cluster(new SimCluster(options));
  fabric::sim::SimOptions sim;
  sim.seed = options.seed;
  sim.min_latency = options.min_latency;
  sim.max_latency = options.max_latency;
  sim.drop_probability = options.drop_probability;
  sim.torn_copies = options.torn_copies;
  sim.trace_history = options.trace_history || std::getenv("FATHOM_SIM_TRACE") != nullptr;
  cluster->network_ = std::make_unique<fabric::sim::SimNetwork>(sim);
  // The scheduler's order comes from the seed too, but not from the fabric's generator: a change in how
  // often one draws does not shift the other.
  cluster->scheduler_ = std::make_unique<SimScheduler>(cluster->network_.get(), options.seed * 0x9e3779b97f4a7c15ULL + 1);
  for (int i = 1; i <= options.nodes; ++i) {
    const uint32_t id = static_cast<uint32_t>(i);
    auto fabric = cluster->network_->AddNode(id);
    if (!fabric.ok()) return fabric.status();
    node::NodeOptions node;
    node.node_id = id;
    node.cluster_token = kToken;
    node.listen_address = "127.0.0.1:0";
    node.memory_bytes = 4 << 20;
    node.region_bytes = 4 << 20;
    node.worker_threads = options.threads_per_node;
    node.ring_bytes = 16 << 10;
    node.clock = &cluster->network_->clock();
    node.executor = cluster->scheduler_.get();
    node.incarnation = options.seed * 1000 + id;  // what a real process draws at random
    node.call_timeout = absl::Seconds(10);        // virtual time
    auto started = node::Node::Start(node, std::move(*fabric));
    if (!started.ok()) return started.status();
    cluster->nodes_.push_back(std::move(*started));
  }
  for (int a = 0; a < options.nodes; ++a) {
    for (int b = a + 1; b < options.nodes; ++b) {
      if (absl::Status s = cluster->nodes_[a]->JoinInProcess(*cluster->nodes_[b]); !s.ok()) return s;
    }
  }
  // The CM admits the members in id order (one configuration change here, one per join in a real cluster:
  // the placement comes out the same, as AdmitMember places a member's regions when it joins).
  for (const auto& node : cluster->nodes_) {
    coordinator::MemberInfo member =
        coordinator::MemberInfoFor(*node, node->options().memory_bytes, coordinator::FABRIC_KIND_SIM);
    member.set_backups_per_region(static_cast<uint32_t>(options.backups));
    if (absl::Status s = coordinator::AdmitMember(&cluster->configuration_, member); !s.ok()) return s;
  }
  cluster->configuration_.set_epoch(1);
  cluster->configuration_.set_manager_id(1);
  cluster->PublishPlacement();
  for (int i = 0; i < options.nodes; ++i) {
    txn::TxnOptions txn;
    txn.backups = options.backups;
    if (options.on_step) {
      const uint32_t id = static_cast<uint32_t>(i + 1);
      txn.on_step = [id, hook = options.on_step](std::string_view step) { hook(id, step); };
    }
    auto service = txn::TransactionService::Attach(cluster->nodes_[i].get(), txn);
    if (!service.ok()) return service.status();
    cluster->services_.push_back(std::move(*service));
  }
  return cluster;
}

void SimCluster::Stop(uint32_t id) {
  stopped_.insert(id);
  node::Node& stopped = node(id);
  for (int t = 0; t < stopped.threads(); ++t) {
    absl::StatusOr<node::NodeThread*> thread = stopped.Thread(t);
    if (thread.ok()) scheduler_->Freeze(*thread);
  }
  network_->Crash(id);
}

void SimCluster::PublishPlacement() {
  const memory::RegionMap map = coordinator::RegionMapOf(configuration_);
  for (const auto& node : nodes_) {
    if (!stopped(node->id())) node->region_directory().Set(map);
  }
}

absl::Status SimCluster::RemoveMember(uint32_t id) {
  if (!coordinator::RemoveMember(&configuration_, id)) {
    return absl::NotFoundError(absl::StrCat("node ", id, " is not a member"));
  }
  configuration_.set_epoch(configuration_.epoch() + 1);
  if (configuration_.manager_id() == id) {
    const std::vector<uint32_t> left = coordinator::DataMemberIds(configuration_);
    configuration_.set_manager_id(left.empty() ? 0 : left.front());
  }
  PublishPlacement();
  for (const auto& node : nodes_) {
    if (node->id() == id || stopped(node->id())) continue;
    if (absl::Status s = node->Disconnect(id); !s.ok() && !absl::IsNotFound(s)) return s;
  }
  return absl::OkStatus();
}

void SimCluster::Record(std::string_view event) {
  events_digest_ = XXH64(event.data(), event.size(), events_digest_);
}

uint64_t SimCluster::history() const {
  const uint64_t fabric = network_->stats().history_digest;
  return XXH64(&fabric, sizeof(fabric), events_digest_);
}

}  // namespace fathom::sim
