// EmbeddedCluster: N nodes in one process, joined through their control servers on loopback, over UCX
// shared memory (the default), UCX tcp, or SimFabric (deterministic faults for protocol tests). For tests
// and the demo; fathomd runs the same Node one per process.
//
//   EmbeddedClusterOptions options;
//   options.nodes = 3;
//   ASSIGN_OR_RETURN(auto cluster, EmbeddedCluster::Start(options));
//   ASSIGN_OR_RETURN(object::ObjectRef ref, cluster->node(1).AllocateObject("x"));
//   ASSIGN_OR_RETURN(std::string bytes, cluster->node(2).ReadObject(ref));
#ifndef FATHOM_SERVER_EMBEDDED_CLUSTER_H_
#define FATHOM_SERVER_EMBEDDED_CLUSTER_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/local_coordinator.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "coordinator/lease_agent.h"
#include "coordinator/membership.h"
#include "platform/node/node.h"

namespace fathom::server {

enum class EmbeddedFabric { kUcxSharedMemory, kUcxTcp, kSim };

struct EmbeddedClusterOptions {
  int nodes = 3;  // ids 1..nodes
  int threads = 2;
  EmbeddedFabric fabric = EmbeddedFabric::kUcxSharedMemory;
  fabric::sim::SimOptions sim;  // for kSim
  uint64_t memory_bytes = 16 << 20;  // per node
  // Membership from an in-process coordinator (LocalCoordinator): nodes register as members and follow the
  // configuration, as fathomd --zk does with ZooKeeper. Otherwise every pair is joined once at start.
  bool coordinated = false;
  // Coordinated clusters: leases over the runtime (lease_agent.h) when positive. The CM removes a member
  // whose lease expires and a removed node joins again by itself. Zero: no leases.
  absl::Duration lease_period = absl::ZeroDuration();
  // Set: the leases' time comes from it and no lease thread runs; the test calls lease(id)->Tick().
  const Clock* lease_clock = nullptr;
  // Adjusts each node's options before it starts (after the cluster filled them in).
  std::function<void(node::NodeOptions&)> customize;
};

class EmbeddedCluster {
 public:
  static absl::StatusOr<std::unique_ptr<EmbeddedCluster>> Start(EmbeddedClusterOptions options);
  ~EmbeddedCluster();

  node::Node& node(uint32_t id) { return *nodes_.at(id - 1); }
  int size() const { return static_cast<int>(nodes_.size()); }
  // The simulated network (kSim only, else null): partitions, crashes, drops.
  fabric::sim::SimNetwork* sim() { return network_.get(); }
  // Coordinated clusters only (else null).
  coordinator::LocalCoordinationService* coordination() { return coordination_.get(); }
  coordinator::Coordinator* coordinator(uint32_t id) { return coordinators_.empty() ? nullptr : coordinators_.at(id - 1).get(); }
  coordinator::MembershipFollower* follower(uint32_t id) { return followers_.empty() ? nullptr : followers_.at(id - 1).get(); }
  // Clusters with leases only (else null).
  coordinator::LeaseAgent* lease(uint32_t id) { return leases_.empty() ? nullptr : leases_.at(id - 1).get(); }
  // Stops node `id` following the configuration (as if its process were stopped: nothing it holds
  // changes), and starts it again. With a lease_clock, also stop calling lease(id)->Tick() meanwhile.
  void PauseMembership(uint32_t id);
  absl::Status ResumeMembership(uint32_t id);
  const std::string& token() const { return token_; }

 private:
  EmbeddedCluster() = default;
  std::unique_ptr<fabric::sim::SimNetwork> network_;  // outlives the nodes (declared first)
  std::unique_ptr<coordinator::LocalCoordinationService> coordination_;
  std::vector<std::unique_ptr<coordinator::LocalCoordinator>> coordinators_;
  std::vector<std::unique_ptr<coordinator::LeaseAgent>> leases_;  // outlive the nodes, whose handlers call them
  std::vector<coordinator::MemberInfo> members_;
  std::vector<std::unique_ptr<node::Node>> nodes_;
  std::vector<std::unique_ptr<coordinator::MembershipFollower>> followers_;  // stopped before the nodes
  std::string token_;
};

}  // namespace fathom::server

#endif  // FATHOM_SERVER_EMBEDDED_CLUSTER_H_
