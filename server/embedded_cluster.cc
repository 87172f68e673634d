#include "server/embedded_cluster.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "platform/fabric/ucx/ucx_fabric.h"

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
  for (int i = 1; i <= options.nodes; ++i) {
    std::unique_ptr<fabric::Fabric> fabric;
    if (options.fabric == EmbeddedFabric::kSim) {
      auto sim = cluster->network_->AddNode(i);
      if (!sim.ok()) return sim.status();
      fabric = std::move(*sim);
    } else {
      fabric::UcxOptions ucx;
      ucx.transports = options.fabric == EmbeddedFabric::kUcxTcp ? "tcp" : "sm";
      auto real = fabric::CreateUcxFabric(ucx);
      if (!real.ok()) return real.status();
      fabric = std::move(*real);
    }
    node::NodeOptions node;
    node.node_id = i;
    node.cluster_name = "embedded";
    node.cluster_token = cluster->token_;
    node.listen_address = "127.0.0.1:0";
    node.worker_threads = options.threads;
    node.memory_bytes = options.memory_bytes;
    node.region_bytes = std::min<uint64_t>(options.memory_bytes, 64 << 20);
    if (options.customize) options.customize(node);
    if (options.coordinated && options.lease_period > absl::ZeroDuration()) {
      coordinator::LeaseOptions lease;
      lease.period = options.lease_period;
      if (options.lease_clock != nullptr) {
        lease.clock = options.lease_clock;
        lease.background = false;
      }
      cluster->leases_.push_back(std::make_unique<coordinator::LeaseAgent>(lease));
      cluster->leases_.back()->InstallHandler(&node);
    }
    auto started = node::Node::Start(node, std::move(fabric));
    if (!started.ok()) {
      return absl::Status(started.status().code(), absl::StrCat("node ", i, ": ", started.status().message()));
    }
    cluster->nodes_.push_back(std::move(*started));
  }
  if (options.coordinated) {
    cluster->coordination_ = std::make_unique<coordinator::LocalCoordinationService>("embedded");
    const coordinator::FabricKind kind = options.fabric == EmbeddedFabric::kSim ? coordinator::FABRIC_KIND_SIM
                                         : options.fabric == EmbeddedFabric::kUcxTcp
                                             ? coordinator::FABRIC_KIND_UCX_TCP
                                             : coordinator::FABRIC_KIND_UCX_SHARED_MEMORY;
    for (int i = 1; i <= options.nodes; ++i) {
      cluster->coordinators_.push_back(cluster->coordination_->NewCoordinator());
      cluster->members_.push_back(coordinator::MemberInfoFor(cluster->node(i), options.memory_bytes, kind));
      if (absl::Status s = cluster->coordinators_.back()->Join(cluster->members_.back()); !s.ok()) return s;
      if (!cluster->leases_.empty()) {
        if (absl::Status s = cluster->leases_.at(i - 1)->Start(&cluster->node(i), cluster->coordinator(i)); !s.ok()) {
          return s;
        }
      }
      cluster->followers_.push_back(nullptr);
      if (absl::Status s = cluster->ResumeMembership(i); !s.ok()) return s;
    }
    return cluster;
  }
  // Every pair once; Join is symmetric, so the other direction is connected too.
  for (int i = 1; i <= options.nodes; ++i) {
    for (int j = i + 1; j <= options.nodes; ++j) {
      if (absl::Status s = cluster->node(i).JoinPeer({static_cast<uint32_t>(j), cluster->node(j).control_address()});
          !s.ok()) {
        return s;
      }
    }
  }
  return cluster;
}

void EmbeddedCluster::PauseMembership(uint32_t id) { followers_.at(id - 1).reset(); }

absl::Status EmbeddedCluster::ResumeMembership(uint32_t id) {
  coordinator::MembershipOptions membership;
  if (!leases_.empty()) {
    membership.lease = leases_.at(id - 1).get();
    membership.rejoin_as = members_.at(id - 1);
  }
  auto follower = coordinator::MembershipFollower::Start(&node(id), coordinator(id), std::move(membership));
  if (!follower.ok()) return follower.status();
  followers_.at(id - 1) = std::move(*follower);
  return absl::OkStatus();
}

EmbeddedCluster::~EmbeddedCluster() {
  for (auto& lease : leases_) lease->Stop();  // their requests go through the nodes
  followers_.clear();  // no membership change while the nodes stop
  // Stop every node before destroying any, so no node talks to a destroyed one.
  for (auto& node : nodes_) node->Stop();
  nodes_.clear();
}

}  // namespace fathom::server
