#include "tests/sim/sim_cluster.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/remap.h"
#include "coordinator/membership.h"
#include "coordinator/placement.h"

namespace fathom::sim {
namespace {

constexpr char kToken[] = "sim-cluster-token-0123456789abcdef";

}  // namespace

SimCluster::SimCluster(const SimClusterOptions& options) : options_(options) {}

SimCluster::~SimCluster() {
  // Leases and subscriptions go before the nodes they call into; the coordinator handles after them
  // (each one's destruction is its session ending), the service last. Nodes stop (and their threads tear
  // down) while the scheduler and the network still exist; rounds they run meanwhile do no background work.
  tearing_down_ = true;
  for (auto& lease : leases_) lease->Stop();
  subscriptions_.clear();
  services_.clear();
  for (auto& node : nodes_) node->Stop();
  coordinators_.clear();
  leases_.clear();
  nodes_.clear();
  service_.reset();
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
  cluster->service_ = std::make_unique<coordinator::LocalCoordinationService>(
      "sim", coordinator::SubscriberList::Mode::kByCaller);
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
    coordinator::LeaseOptions lease;
    lease.period = options.lease_period;
    lease.clock = &cluster->network_->clock();
    lease.background = false;  // ticked by the scheduler
    cluster->leases_.push_back(std::make_unique<coordinator::LeaseAgent>(lease));
    cluster->leases_.back()->InstallHandler(&node);
    auto started = node::Node::Start(node, std::move(*fabric));
    if (!started.ok()) return started.status();
    cluster->nodes_.push_back(std::move(*started));
  }
  for (int a = 0; a < options.nodes; ++a) {
    for (int b = a + 1; b < options.nodes; ++b) {
      if (absl::Status s = cluster->nodes_[a]->JoinInProcess(*cluster->nodes_[b]); !s.ok()) return s;
    }
  }
  // Every node joins the configuration in id order (node 1 is the CM; it places each member's regions as
  // it joins), follows it, and takes a lease.
  for (int i = 0; i < options.nodes; ++i) {
    node::Node& node = *cluster->nodes_[i];
    cluster->coordinators_.push_back(cluster->service_->NewCoordinator());
    cluster->followed_members_.emplace_back();
    cluster->applied_epoch_.push_back(0);
    coordinator::MemberInfo member =
        coordinator::MemberInfoFor(node, node.options().memory_bytes, coordinator::FABRIC_KIND_SIM);
    member.set_backups_per_region(static_cast<uint32_t>(options.backups));
    if (absl::Status s = cluster->coordinators_[i]->Join(member); !s.ok()) return s;
    SimCluster* raw = cluster.get();
    cluster->subscriptions_.push_back(cluster->coordinators_[i]->Subscribe(
        [raw, i](const coordinator::Configuration& configuration) { raw->Follow(i, configuration); }));
  }
  for (int i = 0; i < options.nodes; ++i) {
    if (absl::Status s = cluster->leases_[i]->Start(cluster->nodes_[i].get(), cluster->coordinators_[i].get());
        !s.ok()) {
      return s;
    }
  }
  // The placement is every node's region map before its transaction layer starts.
  for (auto& handle : cluster->coordinators_) handle->DeliverPending();
  for (int i = 0; i < options.nodes; ++i) {
    txn::TxnOptions txn;
    txn.backups = options.backups;
    txn.fill_bytes_per_second = options.fill_bytes_per_second;
    txn.resend_interval = options.resend_interval;
    if (options.on_step) {
      const uint32_t id = static_cast<uint32_t>(i + 1);
      txn.on_step = [id, hook = options.on_step](std::string_view step) { hook(id, step); };
    }
    auto service = txn::TransactionService::Attach(cluster->nodes_[i].get(), txn);
    if (!service.ok()) return service.status();
    cluster->services_.push_back(std::move(*service));
  }
  cluster->scheduler_->AddBackground([raw = cluster.get()] { return raw->Background(); });
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

void SimCluster::HoldConfigurations(uint32_t id, bool hold) {
  if (hold) {
    held_.insert(id);
  } else {
    held_.erase(id);
  }
}

void SimCluster::Follow(size_t index, const coordinator::Configuration& configuration) {
  node::Node& node = *nodes_[index];
  node.region_directory().Set(coordinator::RegionMapOf(configuration));
  // Precise membership: a member that left is heard no more.
  std::vector<uint32_t> members = coordinator::DataMemberIds(configuration);
  for (uint32_t was : followed_members_[index]) {
    if (was == node.id() || std::find(members.begin(), members.end(), was) != members.end()) continue;
    absl::Status s = node.Disconnect(was);
    Record(absl::StrCat("node ", node.id(), " disconnects node ", was, ": ", s.ToString()));
  }
  followed_members_[index] = std::move(members);
  node.region_directory().MarkFenced(configuration.epoch());
  applied_epoch_[index] = configuration.epoch();
  Record(absl::StrCat("node ", node.id(), " applies configuration ", configuration.epoch()));
}

size_t SimCluster::Background() {
  if (tearing_down_) return 0;
  size_t work = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!stopped(nodes_[i]->id()) && !held_.contains(nodes_[i]->id())) work += coordinators_[i]->DeliverPending();
  }
  // Lease ticks as a real agent's thread runs them: twice per renewal interval (lease_agent.cc).
  const absl::Time now = network_->clock().Now();
  if (now >= next_repair_) {
    next_repair_ = now + options_.lease_period / 4;
    work += Repair();
    work += Recover();
  }
  if (now < next_lease_tick_) return work;
  next_lease_tick_ = now + options_.lease_period / 16;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!stopped(nodes_[i]->id())) leases_[i]->Tick();
  }
  return work;
}

size_t SimCluster::Repair() {
  size_t repaired = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    node::Node& node = *nodes_[i];
    if (stopped(node.id())) continue;
    for (uint32_t peer : node.failed_peers()) {
      const std::vector<uint32_t>& members = followed_members_[i];
      if (stopped(peer) || std::find(members.begin(), members.end(), peer) == members.end()) continue;
      node.Disconnect(peer).IgnoreError();
      absl::Status joined = node.JoinInProcess(*nodes_.at(peer - 1));
      Record(absl::StrCat("node ", node.id(), " connects to node ", peer, " again: ", joined.ToString()));
      ++repaired;
    }
  }
  return repaired;
}

size_t SimCluster::Recover() {
  size_t served = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    node::Node& node = *nodes_[i];
    if (stopped(node.id())) continue;
    if (services_[i]->fills_waiting()) {
      absl::StatusOr<std::vector<txn::TransactionService::Filled>> filled = services_[i]->FillBackups();
      if (!filled.ok()) Record(absl::StrCat("node ", node.id(), " fills: ", filled.status().ToString()));
      std::vector<std::pair<uint32_t, uint32_t>> copies;
      for (const auto& [region, backup] : filled.ok() ? *filled : std::vector<txn::TransactionService::Filled>{}) {
        copies.emplace_back(region, backup);
      }
      if (!copies.empty()) {
        const uint32_t id = node.id();
        absl::StatusOr<coordinator::Configuration> marked =
            coordinators_[i]->Update(coordinator::FinishFillingUpdate(id, copies));
        for (const auto& [region, backup] : copies) {
          Record(absl::StrCat("node ", id, " filled region ", region, " at node ", backup, ": ",
                              marked.ok() ? absl::StrCat(marked->epoch()) : marked.status().ToString()));
          ++served;
        }
      }
    }
    // Transaction recovery (the CM only): a round per thread until one settles in this configuration.
    absl::StatusOr<txn::TransactionService::OrphanProgress> orphans = services_[i]->RecoverOrphans();
    if (!orphans.ok() || !orphans->settled) {
      Record(absl::StrCat("node ", node.id(), " recovers orphans: ",
                          orphans.ok() ? absl::StrCat("committed ", orphans->committed, ", aborted ", orphans->aborted,
                                                      " ", orphans->error)
                                       : orphans.status().ToString()));
    }
    // As fathomd does (server.cc): copies made before a promotion needs them. Only errors are recorded.
    if (absl::Status prepared = services_[i]->PrepareBackupCopies(); !prepared.ok()) {
      Record(absl::StrCat("node ", node.id(), " prepares backup copies: ", prepared.ToString()));
    }
    if (services_[i]->promotions_waiting().empty()) continue;
    absl::StatusOr<std::vector<uint32_t>> now_served = services_[i]->ServePromotedRegions(followed_members_[i]);
    Record(absl::StrCat("node ", node.id(), " promotions: ",
                        now_served.ok() ? absl::StrJoin(*now_served, " ") : now_served.status().ToString()));
    if (!now_served.ok() || now_served->empty()) continue;
    served += now_served->size();
    for (uint32_t peer : followed_members_[i]) {
      if (peer == node.id() || stopped(peer)) continue;
      absl::Status republished = node.RepublishInProcess(*nodes_.at(peer - 1));
      Record(absl::StrCat("node ", node.id(), " republishes to node ", peer, ": ", republished.ToString()));
    }
  }
  return served;
}

absl::Status SimCluster::EndSession(uint32_t id) {
  if (id < 1 || id > coordinators_.size()) return absl::NotFoundError(absl::StrCat("no node ", id));
  return coordinators_[id - 1]->Leave();
}

void SimCluster::Record(std::string_view event) {
  events_digest_ = XXH64(event.data(), event.size(), events_digest_);
}

uint64_t SimCluster::history() const {
  const uint64_t fabric = network_->stats().history_digest;
  return XXH64(&fabric, sizeof(fabric), events_digest_);
}

}  // namespace fathom::sim
