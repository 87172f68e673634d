// EmbeddedCluster: N servers (server.h) in one process, over UCX shared memory (the default), UCX tcp, or
// SimFabric (deterministic faults for protocol tests), either a static cluster (every pair joined) or
// following an in-process coordinator (LocalCoordinator), with leases if asked. Each node has the
// transaction layer (options.transactions) unless attach_transactions is false. For tests, the demo and
// the embedded benchmark; fathomd runs the same Server one per process.
//
//   EmbeddedClusterOptions options;
//   options.nodes = 3;
//   ASSIGN_OR_RETURN(auto cluster, EmbeddedCluster::Start(options));
//   txn::Transaction tx = cluster->server(1).transactions().Begin();
//   ASSIGN_OR_RETURN(object::ObjectRef ref, cluster->node(1).AllocateObject("x"));
//   ASSIGN_OR_RETURN(std::string bytes, cluster->node(2).ReadObject(ref));
#ifndef FATHOM_SERVER_EMBEDDED_CLUSTER_H_
#define FATHOM_SERVER_EMBEDDED_CLUSTER_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/lease_agent.h"
#include "coordinator/local_coordinator.h"
#include "coordinator/membership.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/node/node.h"
#include "server/server.h"
#include "txn/txn.h"

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
  // Every node's transaction layer (f = transactions.backups); static clusters run in configuration 1
  // with every node a data member.
  txn::TxnOptions transactions;
  bool attach_transactions = true;
  // Adjusts each node's options before it starts (after the cluster filled them in).
  std::function<void(node::NodeOptions&)> customize;
};

class EmbeddedCluster {
 public:
  static absl::StatusOr<std::unique_ptr<EmbeddedCluster>> Start(EmbeddedClusterOptions options);
  ~EmbeddedCluster();  // Stop()

  // Stops every server (leases, membership, node threads) before any is destroyed, so no node talks to a
  // destroyed one; what they own (transaction layers) stays until the cluster is destroyed.
  void Stop();

  Server& server(uint32_t id) { return *servers_.at(id - 1); }
  node::Node& node(uint32_t id) { return server(id).node(); }
  int size() const { return static_cast<int>(servers_.size()); }
  // The simulated network (kSim only, else null): partitions, crashes, drops.
  fabric::sim::SimNetwork* sim() { return network_.get(); }
  // Coordinated clusters only (else null).
  coordinator::LocalCoordinationService* coordination() { return coordination_.get(); }
  coordinator::Coordinator* coordinator(uint32_t id) { return coordinators_.empty() ? nullptr : coordinators_.at(id - 1).get(); }
  coordinator::MembershipFollower* follower(uint32_t id) { return server(id).follower(); }
  // Clusters with leases only (else null).
  coordinator::LeaseAgent* lease(uint32_t id) { return server(id).lease(); }
  // Stops node `id` following the configuration (as if its process were stopped: nothing it holds
  // changes), and starts it again. With a lease_clock, also stop calling lease(id)->Tick() meanwhile.
  void PauseMembership(uint32_t id) { server(id).PauseMembership(); }
  absl::Status ResumeMembership(uint32_t id) { return server(id).ResumeMembership(); }
  const std::string& token() const { return token_; }

 private:
  EmbeddedCluster() = default;
  std::unique_ptr<fabric::sim::SimNetwork> network_;  // outlives the nodes (declared first)
  std::unique_ptr<coordinator::LocalCoordinationService> coordination_;
  std::vector<std::unique_ptr<coordinator::LocalCoordinator>> coordinators_;  // outlive the servers
  std::vector<std::unique_ptr<Server>> servers_;
  std::string token_;
};

}  // namespace fathom::server

#endif  // FATHOM_SERVER_EMBEDDED_CLUSTER_H_
