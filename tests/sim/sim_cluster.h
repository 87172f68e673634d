// SimCluster: a whole Fathom cluster — nodes, transactions, KV tables — on SimFabric, run on the calling
// thread by a SimScheduler, deterministically from one seed: the seed draws the fabric's latencies, drops
// and torn copies, the order in which node threads take turns, and the nodes' incarnations. A run's
// history() digests every fabric operation (so every message) with what the workload recorded; two runs
// of one seed have equal histories, and a failing seed replays.
//
//   SimClusterOptions options;
//   options.seed = 7;
//   ASSIGN_OR_RETURN(std::unique_ptr<SimCluster> cluster, SimCluster::Start(options));
//   cluster->txns(1).Begin() ...                  // blocking calls pump the scheduler
//   cluster->Record("transfer 3 -> 5: OK");       // into the history
//   uint64_t digest = cluster->history();
//
// The coordinator runs in the simulation too: a LocalCoordinationService plays ZooKeeper, every node joins
// it through its own LocalCoordinator (the first to join is the configuration manager, CM, which places
// every region: coordinator::AdmitMember), holds a lease (LeaseAgent, ticked by the scheduler in virtual
// time), and follows each configuration as a server does: the placement becomes its region map, and
// members that left are disconnected. So a stopped node's lease lapses and the CM removes it, in the same
// virtual instant every run. A connection that fails between two running members is made again, as the
// membership follower does, and so is a promoted backup's serving of its copy. Not simulated yet:
// ZooKeeper's sessions and the CM's election (the first node stays CM; stopping it stops configuration
// changes), rejoining, log epochs and the SSD log. Nodes connect to each other in process at the start.
#ifndef FATHOM_TESTS_SIM_SIM_CLUSTER_H_
#define FATHOM_TESTS_SIM_SIM_CLUSTER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/configuration.h"
#include "coordinator/lease_agent.h"
#include "coordinator/local_coordinator.h"
#include "kv/catalog.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/node/node.h"
#include "tests/sim/sim_scheduler.h"
#include "txn/txn.h"

namespace fathom::sim {

struct SimClusterOptions {
  uint64_t seed = 1;
  int nodes = 3;
  int threads_per_node = 2;
  int backups = 1;  // f
  double drop_probability = 0;
  absl::Duration min_latency = absl::Microseconds(1);
  absl::Duration max_latency = absl::Microseconds(5);
  bool torn_copies = true;
  // Virtual time: a stopped member is removed a lease period (plus up to half a renewal interval) after
  // its last renewal.
  absl::Duration lease_period = absl::Milliseconds(40);
  bool trace_history = false;  // SimOptions::trace_history
  uint64_t fill_bytes_per_second = 0;  // TxnOptions::fill_bytes_per_second (data recovery's pace)
  absl::Duration resend_interval = absl::Milliseconds(5);  // TxnOptions::resend_interval
  // Called at every named step of the commit protocol on every node (TxnOptions::on_step).
  std::function<void(uint32_t node, std::string_view step)> on_step;
};

class SimCluster {
 public:
  static absl::StatusOr<std::unique_ptr<SimCluster>> Start(const SimClusterOptions& options);
  ~SimCluster();

  fabric::sim::SimNetwork& network() { return *network_; }
  SimScheduler& scheduler() { return *scheduler_; }
  node::Node& node(uint32_t id) { return *nodes_.at(id - 1); }
  txn::TransactionService& txns(uint32_t id) { return *services_.at(id - 1); }
  kv::Catalog& catalog() { return catalog_; }
  int size() const { return static_cast<int>(nodes_.size()); }

  // Crashes node `id` where it stands: its threads get no more turns and the fabric fails every
  // operation to or from it.
  void Stop(uint32_t id);
  bool stopped(uint32_t id) const { return stopped_.contains(id); }

  // The committed configuration (what ZooKeeper holds).
  coordinator::Configuration configuration() const { return service_->configuration(); }
  // The epoch of the last configuration node `id` has applied.
  uint64_t applied_epoch(uint32_t id) const { return applied_epoch_.at(id - 1); }
  // Member `id`'s coordinator session ends (as when ZooKeeper expires it): it leaves the configuration at
  // once. The running nodes apply the change on the scheduler's next round.
  absl::Status EndSession(uint32_t id);
  coordinator::LeaseAgent& lease(uint32_t id) { return *leases_.at(id - 1); }
  // While held, node `id` applies no new configuration (as a member whose ZooKeeper watch is slow): they
  // wait, in order, until it is released.
  void HoldConfigurations(uint32_t id, bool hold);

  // Adds a workload event to the history.
  void Record(std::string_view event);
  // The fabric's history digest combined with the recorded events.
  uint64_t history() const;

 private:
  explicit SimCluster(const SimClusterOptions& options);
  // What a server does with a configuration (server/server.cc): its placement becomes the node's region
  // map, and members that left are disconnected.
  void Follow(size_t index, const coordinator::Configuration& configuration);
  // The scheduler's background work: configuration deliveries, lease ticks and connection repairs of the
  // running nodes.
  size_t Background();
  // What the membership follower does with a connection that failed while both ends stay members: it
  // makes a new one (Disconnect, then join again). A connection a test drops on purpose stays dropped.
  size_t Repair();
  // What the membership follower does for recovery: a primary copies its regions to their new backups
  // and marks them filled (TransactionService::FillBackups); a node promoted to primary of a region serves
  // its backup copy once no record of it is pending (TransactionService::ServePromotedRegions), and
  // republishes itself to the members so they import it.
  size_t Recover();

  SimClusterOptions options_;
  std::unique_ptr<fabric::sim::SimNetwork> network_;
  std::unique_ptr<SimScheduler> scheduler_;
  std::vector<std::unique_ptr<node::Node>> nodes_;
  std::vector<std::unique_ptr<txn::TransactionService>> services_;
  kv::InProcessCatalog catalog_;
  uint64_t events_digest_ = 0;
  std::set<uint32_t> stopped_;
  std::set<uint32_t> held_;  // HoldConfigurations
  std::unique_ptr<coordinator::LocalCoordinationService> service_;
  // Per node (index id - 1).
  std::vector<std::unique_ptr<coordinator::LocalCoordinator>> coordinators_;
  std::vector<std::unique_ptr<coordinator::LeaseAgent>> leases_;
  std::vector<std::unique_ptr<coordinator::Subscription>> subscriptions_;
  std::vector<std::vector<uint32_t>> followed_members_;  // the data members of the last applied one
  std::vector<uint64_t> applied_epoch_;
  absl::Time next_lease_tick_ = absl::InfinitePast();
  absl::Time next_repair_ = absl::InfinitePast();
  bool tearing_down_ = false;
};

}  // namespace fathom::sim

#endif  // FATHOM_TESTS_SIM_SIM_CLUSTER_H_
