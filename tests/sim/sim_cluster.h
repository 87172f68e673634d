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
// Who holds each region is the configuration manager's placement: the nodes are admitted to a
// configuration one by one (coordinator::AdmitMember, as the CM does when they join) and every node's
// region map is that configuration's (RegionMapOf). RemoveMember makes the change the CM makes when a
// member's lease lapses. Not simulated yet: the CM itself (leases, its election, ZooKeeper), the
// membership follower and log epochs; every node joins every other in process at the start.
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
  bool trace_history = false;  // SimOptions::trace_history
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

  // The configuration every node follows (epoch 1 after the start, one more per change).
  const coordinator::Configuration& configuration() const { return configuration_; }
  // Removes member `id` from the configuration, as the CM does when its lease lapses, and gives every
  // other node the new configuration's placement (and drops its connection to `id`). No replica moves.
  absl::Status RemoveMember(uint32_t id);

  // Adds a workload event to the history.
  void Record(std::string_view event);
  // The fabric's history digest combined with the recorded events.
  uint64_t history() const;

 private:
  explicit SimCluster(const SimClusterOptions& options);
  // Every running node's region map becomes the configuration's placement.
  void PublishPlacement();

  SimClusterOptions options_;
  std::unique_ptr<fabric::sim::SimNetwork> network_;
  std::unique_ptr<SimScheduler> scheduler_;
  std::vector<std::unique_ptr<node::Node>> nodes_;
  std::vector<std::unique_ptr<txn::TransactionService>> services_;
  kv::InProcessCatalog catalog_;
  uint64_t events_digest_ = 0;
  std::set<uint32_t> stopped_;
  coordinator::Configuration configuration_;
};

}  // namespace fathom::sim

#endif  // FATHOM_TESTS_SIM_SIM_CLUSTER_H_
