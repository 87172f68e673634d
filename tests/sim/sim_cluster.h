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
// Every node is a real server::Server (server/server.h), the one fathomd runs, on the simulation's seams:
// its node threads, lease ticks and membership follower run as the scheduler's threads and tasks in
// virtual time, and its joins reach the other servers in process (node::InProcessPeers). ZooKeeper is the
// simulated ensemble (sim_zookeeper.h), which the cluster's task runs (expiries, watch events): every
// server owns the ZooKeeperCoordinator fathomd runs, as a task on the scheduler, so the configuration
// manager (CM) is elected (node 1 first, as the first to join), a stopped node's session expires, and a
// member or the CM may lose ZooKeeper alone. So a stopped node's lease lapses and the CM removes it, its
// regions are promoted and refilled, a successor CM takes over, and members reconnect after a dropped
// connection, all by the servers' own code and in the same virtual instant every run. With ssd_log, every
// node keeps its SSD log on the simulated disk (sim_disk.h), log epochs close, and the disk can fail or
// lose power. Not simulated yet (docs/architecture.md): restarts from the log.
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
#include "kv/catalog.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/node/in_process_peers.h"
#include "platform/node/node.h"
#include "server/server.h"
#include "tests/sim/sim_disk.h"
#include "tests/sim/sim_scheduler.h"
#include "tests/sim/sim_zookeeper.h"
#include "txn/txn.h"

namespace fathom::sim {

struct SimClusterOptions {
  uint64_t seed = 1;
  int nodes = 3;
  int threads_per_node = 2;
  int backups = 1;  // f
  double drop_probability = 0;  // from when Start returns (a start with drops may not settle)
  absl::Duration min_latency = absl::Microseconds(1);
  absl::Duration max_latency = absl::Microseconds(5);
  bool torn_copies = true;
  // Virtual time: a stopped member is removed a lease period (plus up to half a renewal interval) after
  // its last renewal.
  absl::Duration lease_period = absl::Milliseconds(40);
  // Asked of the simulated ensemble, whose tick is half a lease period (so 1 to 10 lease periods); zero:
  // ten lease periods.
  absl::Duration zookeeper_session_timeout = absl::ZeroDuration();
  bool trace_history = false;  // SimOptions::trace_history
  uint64_t fill_bytes_per_second = 0;  // TxnOptions::fill_bytes_per_second (data recovery's pace)
  absl::Duration resend_interval = absl::Milliseconds(5);  // TxnOptions::resend_interval
  // Every node keeps its SSD log on the simulated disk, in DataDirOf(id) (ServerOptions::data_dir), and
  // syncs every batch if log_fsync.
  bool ssd_log = false;
  bool log_fsync = false;
  // Called at every named step of the commit protocol on every node (TxnOptions::on_step).
  std::function<void(uint32_t node, std::string_view step)> on_step;
};

class SimCluster {
 public:
  // Returns once every server started and applied the last configuration.
  static absl::StatusOr<std::unique_ptr<SimCluster>> Start(const SimClusterOptions& options);
  ~SimCluster();

  uint64_t seed() const { return options_.seed; }
  const SimClusterOptions& options() const { return options_; }
  fabric::sim::SimNetwork& network() { return *network_; }
  SimScheduler& scheduler() { return *scheduler_; }
  server::Server& server(uint32_t id) { return *servers_.at(id - 1); }
  node::Node& node(uint32_t id) { return server(id).node(); }
  txn::TransactionService& txns(uint32_t id) { return server(id).transactions(); }
  // The tables' catalog (in the configuration), through node `through`'s coordinator.
  kv::Catalog& catalog(uint32_t through = 1) { return *server(through).catalog(); }
  int size() const { return static_cast<int>(servers_.size()); }

  // Crashes node `id` where it stands: its threads and tasks get no more turns, the fabric fails every
  // operation to or from it, joins to it fail as to a dead process, and its ZooKeeper session expires a
  // session timeout later (nobody pings it).
  void Stop(uint32_t id);
  bool stopped(uint32_t id) const { return stopped_.contains(id); }
  // Pauses node `id` (as SIGSTOP does): its threads and tasks get no turns and its ZooKeeper session is
  // not pinged, but its memory and connections stay; Resume lets it go on where it stood.
  void Pause(uint32_t id);
  void Resume(uint32_t id);
  bool paused(uint32_t id) const { return paused_.contains(id); }
  // Node `id`'s machine loses power: crashed (Stop), and its directory on the disk keeps only what was
  // synced.
  absl::Status PowerLoss(uint32_t id);

  // Every node's data directory (with ssd_log).
  SimDisk& disk() { return *disk_; }
  static std::string DataDirOf(uint32_t id);

  // The committed configuration (what ZooKeeper holds; empty before the first).
  coordinator::Configuration configuration() const;
  SimZooKeeperStore& zookeeper() { return *zookeeper_; }
  // The epoch of the last configuration node `id`'s membership follower fully applied.
  uint64_t applied_epoch(uint32_t id);
  // Member `id` leaves the configuration through its coordinator (Coordinator::Leave). The running nodes
  // apply the change as it reaches them; node `id`'s own (real) membership follower joins again.
  absl::Status Leave(uint32_t id);
  coordinator::LeaseAgent& lease(uint32_t id) { return *server(id).lease(); }
  // While held, node `id`'s coordinator hears no ZooKeeper event (as a member whose watches are slow), so
  // it reads no new configuration until released.
  void HoldConfigurations(uint32_t id, bool hold);

  // Adds a workload event to the history.
  void Record(std::string_view event);
  // The fabric's history digest combined with the recorded events (servers' log lines among them).
  uint64_t history() const;

 private:
  explicit SimCluster(const SimClusterOptions& options);
  absl::Status StartServer(uint32_t id);
  // Node `id`'s threads and tasks get no turns (true) or get them again.
  void Freeze(uint32_t id, bool frozen);

  SimClusterOptions options_;
  std::unique_ptr<fabric::sim::SimNetwork> network_;
  std::unique_ptr<SimScheduler> scheduler_;
  node::InProcessPeers in_process_peers_;
  std::unique_ptr<SimZooKeeperStore> zookeeper_;  // outlives the servers' sessions
  std::unique_ptr<SimDisk> disk_;                 // outlives the servers' logs
  std::vector<std::unique_ptr<server::Server>> servers_;
  uint64_t events_digest_ = 0;
  std::set<uint32_t> stopped_;
  std::set<uint32_t> paused_;
  bool trace_ = false;  // servers' log lines to stderr too
};

}  // namespace fathom::sim

#endif  // FATHOM_TESTS_SIM_SIM_CLUSTER_H_
