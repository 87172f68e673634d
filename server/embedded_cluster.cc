#include "server/embedded_cluster.h"

#include <random>

#include "absl/strings/str_cat.h"

namespace fathom::server {
namespace {

std::string RandomToken() {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device device;
  std::string token;
  for (int i = 0; i < 32; ++i) token.push_back(kAlphabet[device() % (sizeof kAlphabet - 1)]);
  return token;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EmbeddedCluster>> EmbeddedCluster::Start(EmbeddedClusterOptions options) {
  if (options.nodes < 1) return absl::InvalidArgumentError("an embedded cluster needs at least one node");
  std::unique_ptr<EmbeddedCluster> cluster(new EmbeddedCluster());
  cluster->token_ = RandomToken();
  if (options.fabric == EmbeddedFabric::kSim) {
    cluster->network_ = std::make_unique<fabric::sim::SimNetwork>(options.sim);
  }
  if (options.coordinated) {
    cluster->coordination_ = std::make_unique<coordinator::LocalCoordinationService>("embedded");
  }
  std::vector<uint32_t> members;
  for (int i = 1; i <= options.nodes; ++i) members.push_back(i);
  for (int i = 1; i <= options.nodes; ++i) {
    ServerOptions server;
    node::NodeOptions& node = server.node;
    node.node_id = i;
    node.cluster_name = "embedded";
    node.cluster_token = cluster->token_;
    node.listen_address = "127.0.0.1:0";
    node.worker_threads = options.threads;
    node.memory_bytes = options.memory_bytes;
    node.region_bytes = std::min<uint64_t>(options.memory_bytes, 64 << 20);
    if (options.customize) options.customize(node);
    if (options.fabric == EmbeddedFabric::kSim) {
      auto sim = cluster->network_->AddNode(i);
      if (!sim.ok()) return sim.status();
      server.fabric = std::move(*sim);
      server.fabric_kind = coordinator::FABRIC_KIND_SIM;
    } else {
      server.transports = options.fabric == EmbeddedFabric::kUcxTcp ? "tcp" : "sm";
    }
    server.transactions = options.transactions;
    server.attach_transactions = options.attach_transactions;
    if (options.coordinated) {
      cluster->coordinators_.push_back(cluster->coordination_->NewCoordinator());
      server.coordinator = cluster->coordinators_.back().get();
      server.lease_period = options.lease_period;
      server.lease_clock = options.lease_clock;
    } else {
      // Every pair once: a node joins those started before it (Join is symmetric).
      for (const auto& started : cluster->servers_) {
        node.peers.push_back({started->id(), started->node().control_address()});
      }
      server.txn_members = members;
    }
    auto started = Server::Start(std::move(server));
    if (!started.ok()) {
      return absl::Status(started.status().code(), absl::StrCat("node ", i, ": ", started.status().message()));
    }
    cluster->servers_.push_back(std::move(*started));
  }
  return cluster;
}

void EmbeddedCluster::Stop() {
  for (auto& server : servers_) server->Stop();
}

EmbeddedCluster::~EmbeddedCluster() {
  Stop();
  servers_.clear();
}

}  // namespace fathom::server
