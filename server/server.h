// Server: the one place a Fathom node is put together from the layers: fabric, node runtime, membership
// (ZooKeeper, an in-process coordinator, or a static peer list), leases, the transaction layer, the SSD
// log with restart, and the kv catalog with the control service's table calls. fathomd is its flags
// (server/fathomd_main.cc); the YCSB driver's client-only member is one too.
//
//   ServerOptions options;
//   options.node.node_id = 1;
//   options.node.cluster_token = token;
//   options.zookeeper = "127.0.0.1:2181";         // or options.coordinator, or options.node.peers
//   options.data_dir = "/var/lib/fathom/1";        // optional: the SSD log, and restart from it
//   ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Start(std::move(options)));
//   txn::TransactionService& txns = server->transactions();
//   ...
//   server->Stop();                                // or destroy it
//
// Start returns once the node is a member (with ZooKeeper or a coordinator: listed in a configuration and
// following it; client-only: connected to every data member) or joined every listed peer, with its
// transaction layer attached; after a restart from data_dir, once its memory holds the restored cut.
// InvalidArgument for bad options; other errors name what could not be started.
#ifndef FATHOM_SERVER_SERVER_H_
#define FATHOM_SERVER_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/coordinator.h"
#include "coordinator/lease_agent.h"
#include "coordinator/membership.h"
#include "coordinator/zookeeper_store.h"
#include "kv/catalog.h"
#include "logging/node_restart.h"
#include "logging/object_log.h"
#include "platform/base/clock.h"
#include "platform/fabric/fabric.h"
#include "platform/node/node.h"
#include "txn/txn.h"

namespace rocksdb {
class Env;
}  // namespace rocksdb

namespace fathom::server {

struct ServerOptions {
  // Id, cluster name and token, control address, memory, threads, TLS, static peers, join timeout.
  // node.register_handlers runs before the server registers its own (a message type keeps its first
  // handler). With node.executor (the replayable simulation: tests/sim/sim_cluster.h) the whole server
  // runs on it: its node threads, its lease ticks and membership follower as tasks on node.clock (no
  // lease channel), and its waits through the executor's RunUntil; node.in_process_peers lets its
  // joins reach the other servers without gRPC.
  node::NodeOptions node;

  // The fabric: given (SimFabric in tests), or UCX with `transports` (UCX_TLS syntax: sm, tcp, rc; empty:
  // UCX_TLS or UCX's default).
  std::unique_ptr<fabric::Fabric> fabric;
  std::string transports;

  // Membership, one of: a ZooKeeper connect string (the server owns a ZooKeeperCoordinator), a
  // coordinator the caller owns and keeps alive until Stop (LocalCoordinator), or neither: a static
  // cluster of node.peers.
  std::string zookeeper;
  absl::Duration zookeeper_session_timeout = absl::Seconds(10);
  // Where ZooKeeper sessions come from (not owned): null, the ZooKeeper C client at `zookeeper`; the
  // simulation gives its simulated ensemble (tests/sim/sim_zookeeper.h). With node.executor the
  // coordinator runs as its task, on node.clock.
  coordinator::ZooKeeperStore* zookeeper_store = nullptr;
  coordinator::Coordinator* coordinator = nullptr;
  // What the coordinator records about the fabric; UNSPECIFIED: derived from `transports`.
  coordinator::FabricKind fabric_kind = coordinator::FABRIC_KIND_UNSPECIFIED;
  // Members that may fail together (a host, a rack): a region's replicas go to distinct domains where the
  // members allow. Empty: a domain of its own.
  std::string failure_domain;
  // With a coordinator: the lease the configuration manager grants over the node runtime (0: none).
  absl::Duration lease_period = absl::Seconds(2);
  // Set: leases take their time from it and run no thread (the caller ticks lease()).
  const Clock* lease_clock = nullptr;
  // Leases on a UDP socket and thread of their own (coordinator/lease_channel.h) on the control service's
  // host, so renewals never wait behind transactions; false (or a lease_clock, or a wildcard host): over
  // the node runtime's rings. A member asks over the channel only if both it and the CM opened one.
  bool lease_channel = true;

  // A client-only member: holds no data and no backups, is never placed on or elected. With a
  // coordinator, Start waits until it is connected to every data member; in a static cluster it joins
  // node.peers, and txn_members (which must not list it) are the data members.
  bool client_only = false;

  // The transaction layer's options (f is transactions.backups); the server adds the log's hooks.
  txn::TxnOptions transactions;
  // False: no transaction layer (the node runtime and membership only). For test clusters that attach
  // their own (logging/testing's LoggedCluster, which restores and logs in process) and node-level tests.
  bool attach_transactions = true;
  // Static clusters: the members that hold data (default: this node and node.peers), and the
  // configuration epoch transaction ids carry (0: 1, or after a restart one past the newest logged; a
  // client of a restarted cluster gives the members' txn.epoch).
  std::vector<uint32_t> txn_members;
  uint64_t configuration_epoch = 0;

  // The SSD log's directory (empty: none). If it holds a log, the server restarts from it.
  std::string data_dir;
  bool log_fsync = false;
  // The file system data_dir is on (null: the machine's). The simulation gives its simulated disk.
  rocksdb::Env* log_env = nullptr;

  // Progress lines ("joining 2 peers", "restored ..."); fathomd prints them with a timestamp.
  std::function<void(const std::string&)> log_line;
};

class Server {
 public:
  static absl::StatusOr<std::unique_ptr<Server>> Start(ServerOptions options);
  ~Server();  // Stop()

  // Stops serving: table calls, lease, membership (leaves the configuration), node threads, then the log
  // writes what is queued. Idempotent.
  void Stop();

  node::Node& node() { return *node_; }
  uint32_t id() const { return id_; }
  // REQUIRES: has_transactions() (attach_transactions).
  txn::TransactionService& transactions() { return *txns_; }
  bool has_transactions() const { return txns_ != nullptr; }
  // Null for a static cluster.
  coordinator::Coordinator* coordinator() { return coordinator_; }
  coordinator::MembershipFollower* follower() { return follower_.get(); }
  coordinator::LeaseAgent* lease() { return lease_.get(); }
  // The tables' names: in the configuration (null for a static cluster).
  kv::Catalog* catalog() { return catalog_.get(); }
  // Null without data_dir.
  logging::ObjectLog* log() { return log_.get(); }
  // The data members the transaction layer last set (client-only: when it joined).
  std::vector<uint32_t> data_members() const;

  // Stops following the configuration, as if the process were stopped (nothing it holds changes; with a
  // lease_clock, the caller stops ticking lease() too), and starts again. Tests of leases and removal.
  void PauseMembership();
  absl::Status ResumeMembership();

 private:
  Server() = default;
  // Start, phase by phase (server.cc).
  absl::Status StartAll();
  absl::Status CheckOptions() const;
  std::vector<uint32_t> StaticMembers() const;
  absl::Status StartNode(std::shared_ptr<const std::string> log_snapshot);
  absl::Status Restore(const logging::LogContents& own, const std::vector<uint32_t>& members,
                       std::optional<coordinator::Configuration>& configuration);
  absl::Status OpenLog(txn::TxnOptions& txn_options);
  absl::Status JoinWithoutTransactions();
  absl::Status FollowConfiguration();
  absl::Status JoinCoordinator();
  absl::Status StartFollower();
  absl::Status WaitUntilListed();
  absl::Status WaitForDataMembers();
  absl::Status WaitForFirstLease();
  // Until `done`, or false after `timeout` (by the node's clock, through its executor if it has one).
  bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout, absl::Duration poll) const;
  // On a node run by an executor, the lease agent ticks as the executor's task; StopLease ends both.
  void StartLeaseTicks();
  void StopLease();
  bool coordinated() const { return !options_.zookeeper.empty() || options_.coordinator != nullptr; }
  void AddCounters();
  void Log(const std::string& line) const;
  // This node's part of recovery, run by the membership follower (coordinator::MembershipOptions::recover):
  // serve promoted regions, fill new backups of the regions it is primary of.
  coordinator::RecoveryStep Recover(const coordinator::Configuration& configuration);
  // Removed while alive, about to join again: the transaction layer lets go of what it held (issue 58,
  // path 5: a lock kept across the rejoin stopped every log epoch from closing).
  void ForgetAfterRemoval();
  // The follower thread's only: when Recover last logged why it could not fill or promote yet (a backup
  // that has not seen the configuration refuses, and is asked again at every configuration).
  absl::Time recovery_logged_ = absl::InfinitePast();
  // The follower thread's only: since when promoted regions wait, and for what, last (logged when served).
  absl::Time promotion_waiting_since_ = absl::InfinitePast();
  std::string promotion_waited_for_;

  ServerOptions options_;
  uint32_t id_ = 0;
  coordinator::MemberInfo me_;
  std::unique_ptr<coordinator::Coordinator> owned_coordinator_;  // with `zookeeper`
  coordinator::Coordinator* coordinator_ = nullptr;
  std::unique_ptr<coordinator::LeaseAgent> lease_;  // outlives the node: its threads answer lease requests
  uint64_t lease_task_ = 0;                          // StartLeaseTicks
  std::unique_ptr<logging::ObjectLog> log_;         // outlives the node: its threads append to it
  std::unique_ptr<node::Node> node_;
  std::unique_ptr<logging::NodeRestore> restored_;
  std::unique_ptr<txn::TransactionService> txns_;
  std::atomic<txn::TransactionService*> attached_txns_{nullptr};  // txns_, for the follower's thread
  std::unique_ptr<coordinator::MembershipFollower> follower_;
  std::unique_ptr<coordinator::Subscription> txn_subscription_;
  std::unique_ptr<coordinator::Subscription> placement_subscription_;
  std::unique_ptr<coordinator::Subscription> listed_subscription_;
  std::unique_ptr<kv::Catalog> catalog_;
  std::atomic<uint64_t> listed_epoch_{0};  // the last configuration subscribers heard listing this node
  absl::Mutex counted_follower_mu_;
  const coordinator::MembershipFollower* counted_follower_ ABSL_GUARDED_BY(counted_follower_mu_) = nullptr;
  bool joined_ = false;  // Join succeeded: Stop leaves
  bool stopped_ = false;
};

}  // namespace fathom::server

#endif  // FATHOM_SERVER_SERVER_H_
