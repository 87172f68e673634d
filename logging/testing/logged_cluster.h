// LoggedCluster: an embedded cluster with the transaction layer on every node and each node logging to
// its own directory (root/node<id>), which can be started again from those logs (whole-cluster restart).
// For tests and benchmarks; it mirrors txn::testing::TxnCluster, which attaches one TxnOptions to every
// node, while each node here needs its own log observer.
//
//   ASSIGN_OR_RETURN(auto cluster, LoggedCluster::Start({.root = dir}));
//   ... run transactions on cluster->services() ...
//   RETURN_IF_ERROR(cluster->WaitForQuiescence());   // backups applied (and logged)
//   RETURN_IF_ERROR(cluster->WaitForLogs());         // lag 0 on every node
//   cluster.reset();                                 // nodes stop, then the logs drain and close
//   ASSIGN_OR_RETURN(cluster, LoggedCluster::Start({.root = dir, .restore = true}));
#ifndef FATHOM_LOGGING_TESTING_LOGGED_CLUSTER_H_
#define FATHOM_LOGGING_TESTING_LOGGED_CLUSTER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "logging/object_log.h"
#include "logging/restore.h"
#include "server/embedded_cluster.h"
#include "txn/txn.h"

namespace fathom::logging::testing {

struct LoggedClusterOptions {
  server::EmbeddedClusterOptions cluster;
  txn::TxnOptions txn;
  std::string root;      // node i logs in root/node<i>
  bool logging = true;   // false: no log at all (the baseline for benchmarks)
  bool log_epochs = true;  // with logging: log epochs (consistent restarts, sync durability)
  // Tests of nodes that join behind the others (with txn.join_log_epochs): node id -> its first log
  // epoch, instead of the one every node shares.
  std::map<uint32_t, uint64_t> first_log_epochs;
  ObjectLogOptions log;  // dir and node_id are filled in per node
  // Rebuild every node's memory and backup copies from the logs in root before the layer attaches.
  bool restore = false;
};

struct RestoreReport {
  std::vector<LogContents> logs;  // what each node's log held (node order)
  size_t primaries = 0;           // objects written into the nodes' regions
  size_t backups = 0;             // objects written into backup copies
  uint64_t epoch = 0;             // the configuration epoch the restarted cluster runs in
  uint64_t log_epoch = 0;         // the log epochs restored: up to this one
};

class LoggedCluster {
 public:
  static absl::StatusOr<std::unique_ptr<LoggedCluster>> Start(LoggedClusterOptions options);
  // Stops the nodes, then the services, then the logs (which write what is queued).
  ~LoggedCluster();

  txn::TransactionService& service(uint32_t node) { return *services_.at(node - 1); }
  std::vector<txn::TransactionService*> services();
  ObjectLog* log(uint32_t node) { return logs_.empty() ? nullptr : logs_.at(node - 1).get(); }
  server::EmbeddedCluster& cluster() { return *cluster_; }
  int size() const { return static_cast<int>(services_.size()); }
  const RestoreReport& restored() const { return restored_; }

  // No participant keeps a record, no coordinator owes a truncation (so backups have applied everything).
  absl::Status WaitForQuiescence(absl::Duration timeout = absl::Seconds(20));
  // Every log has persisted everything appended so far, and closed the current log epoch.
  absl::Status WaitForLogs(absl::Duration timeout = absl::Seconds(20));
  // Every data region's backups are byte-identical to the region (after WaitForQuiescence).
  absl::Status CheckReplicasIdentical();
  // Stops every node and then abandons every log (what is queued is lost), as a power cut would.
  void Crash();
  // Abandons one node's log while the cluster goes on: what it has queued and whatever it is given from
  // now on is lost, as when that node's disk is cut off first.
  void AbandonLog(uint32_t node) { logs_.at(node - 1)->Abandon(); }

  // A copy of `bytes` (8-byte aligned) taken with 8-byte atomic loads, as node threads write objects, so
  // reading memory they may touch is well-defined (and clean under ThreadSanitizer).
  static std::string Copy(const std::byte* bytes, size_t size);
  // Every node's data regions, byte for byte, by region id.
  std::map<uint32_t, std::string> Memory();
  // The version of every object slot in `memory` (the 64-byte slots these tests use), by raw address.
  static std::map<uint64_t, uint64_t> SlotVersions(const std::map<uint32_t, std::string>& memory);

 private:
  LoggedCluster() = default;
  std::unique_ptr<server::EmbeddedCluster> cluster_;
  std::vector<std::unique_ptr<txn::TransactionService>> services_;
  std::vector<std::unique_ptr<ObjectLog>> logs_;
  RestoreReport restored_;
};

}  // namespace fathom::logging::testing

#endif  // FATHOM_LOGGING_TESTING_LOGGED_CLUSTER_H_
