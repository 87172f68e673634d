// fathomd: one Fathom node as a process.
//
//   fathomd --node_id=1 --listen=0.0.0.0:7001 --token_file=/etc/fathom/token --memory=4G --threads=4
//           --transports=tcp --zk=10.0.0.9:2181 --cluster=prod
//   fathomd ... --peers=2@10.0.0.2:7001,3@10.0.0.3:7001          (a static cluster, without ZooKeeper)
//
// It allocates and registers its memory, starts its worker threads and control service, and joins the
// cluster: with --zk it registers as a member and then follows the coordinator's configuration (joining
// members as they appear, dropping those that leave, holding a lease from the configuration manager over
// the node runtime (--lease_period; a member that stops renewing is removed, and joins again when it
// runs again)); with --peers it joins every peer listed (waiting up
// to --join_timeout for them). Then it prints "READY node=<id> control=<host:port>" on stdout and serves
// until SIGTERM, SIGINT or a Shutdown call. With --zk it also serves the control service's table calls
// (fathomctl table create|drop|list) with the kv API, the tables' names kept in the configuration. Exit codes: 0 clean stop, 1 a runtime
// failure (port in use, peer unreachable, memory not available, a damaged log), 2 bad flags.
//
// With --data_dir the node logs every object state it installs (as primary and as backup) to a RocksDB
// database there (logging/object_log.h; counters log.* in Stats). If the directory already holds a log,
// the node restarts from it: it validates the whole log first (any damage or unknown format version
// stops startup, exit 1, naming the node, directory and key), joins every other member (--peers must
// list them all; with --zk it joins through ZooKeeper and waits for the data members its log recorded,
// m:members, to be back and connected; they must restart with their directories too), fetches their
// logs over the fabric, and rebuilds its primaries and backup copies from the log epochs every log closed
// (docs/formats/ssd-log.md, "Whole-cluster restart") before the transaction layer attaches. The
// restarted cluster runs in a later configuration epoch (--peers: newest logged + 1; --zk: ZooKeeper's),
// shown as txn.epoch in Stats.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "coordinator/zookeeper_coordinator.h"
#include "kv/coordinator_catalog.h"
#include "logging/log_exchange.h"
#include "logging/log_reader.h"
#include "logging/node_restart.h"
#include "logging/object_log.h"
#include "logging/txn_hook.h"
#include "platform/fabric/ucx/ucx_fabric.h"
#include "platform/node/control/cluster_token.h"
#include "coordinator/lease_agent.h"
#include "coordinator/membership.h"
#include "platform/node/node.h"
#include "server/table_admin.h"
#include "txn/txn.h"

ABSL_FLAG(uint32_t, node_id, 0, "this node's id, 1..65535 (required)");
ABSL_FLAG(std::string, cluster, "fathom", "cluster name; every node of a cluster uses the same");
ABSL_FLAG(std::string, listen, "127.0.0.1:7000", "control service address, host:port (port 0: pick one)");
ABSL_FLAG(std::string, peers, "", "other nodes, id@host:port,... (without --zk)");
ABSL_FLAG(std::string, zk, "", "ZooKeeper connect string host:port[,host:port]: membership from the coordinator");
ABSL_FLAG(absl::Duration, zk_session_timeout, absl::Seconds(10),
          "ZooKeeper session timeout: how long a dead node stays a member");
ABSL_FLAG(absl::Duration, lease_period, absl::Seconds(2),
          "with --zk: lease the configuration manager grants over the node runtime; a member that does not "
          "renew it within this is removed (0: no leases, only ZooKeeper sessions)");
ABSL_FLAG(std::string, memory, "256M", "memory this node contributes (K, M, G suffixes)");
ABSL_FLAG(std::string, region_size, "64M", "size of each memory region (multiple of 1M, at most 4G)");
ABSL_FLAG(int, threads, 2, "worker threads; every node of a cluster must use the same number");
ABSL_FLAG(absl::Duration, idle_wait, absl::Milliseconds(5),
          "longest sleep of an idle node thread between looks at its rings: bounds the first message's latency "
          "after a quiet spell (a member serving mostly one-sided reads is idle most of the time)");
ABSL_FLAG(std::string, transports, "",
          "UCX transports (UCX_TLS syntax): sm for one host, tcp across hosts, rc with RDMA NICs; empty: UCX_TLS");
ABSL_FLAG(std::string, token, "", "cluster token (prefer --token_file: flags are visible to other users)");
ABSL_FLAG(std::string, token_file, "", "file holding the cluster token");
ABSL_FLAG(std::string, tls_cert, "", "TLS certificate for the control service (PEM); with --tls_key");
ABSL_FLAG(std::string, tls_key, "", "TLS private key (PEM)");
ABSL_FLAG(std::string, tls_ca, "", "CA certificate to verify peers' control services (PEM)");
ABSL_FLAG(absl::Duration, join_timeout, absl::Seconds(30), "how long to wait for the listed peers");
ABSL_FLAG(int, backups, 1, "f: backups of every region in memory (transactions replicate to f+1 nodes)");
ABSL_FLAG(std::string, data_dir, "",
          "directory of this node's SSD log (created if missing); if it holds a log, the node restarts from it "
          "(with every other member, listed in --peers). Empty: no log");
ABSL_FLAG(bool, log_fsync, false,
          "fsync every log batch: the log then survives power loss, not only a killed process (costs latency "
          "on the log's own thread, not on Commit)");
ABSL_FLAG(std::string, txn_members, "",
          "without --zk: the nodes that hold data and replicas, id,id,... (default: this node and --peers); "
          "every node of the cluster must list the same. With --zk the configuration says.");

namespace fathom::server {
namespace {

void Log(uint32_t node, const std::string& message) {
  std::cerr << absl::FormatTime("%Y-%m-%d %H:%M:%E3S", absl::Now(), absl::LocalTimeZone()) << " fathomd[" << node
            << "]: " << message << std::endl;
}

// What the coordinator records about this node's transport.
coordinator::FabricKind FabricKindOf(const std::string& transports) {
  if (transports == "sm" || transports == "posix" || transports == "sysv" || transports == "cma") {
    return coordinator::FABRIC_KIND_UCX_SHARED_MEMORY;
  }
  if (transports.find("rc") != std::string::npos || transports.find("ud") != std::string::npos ||
      transports.find("dc") != std::string::npos) {
    return coordinator::FABRIC_KIND_UCX_VERBS;
  }
  return coordinator::FABRIC_KIND_UCX_TCP;
}

int BadFlags(const std::string& message) {
  std::cerr << "fathomd: " << message << "\n(see fathomd --help)" << std::endl;
  return 2;
}

absl::StatusOr<std::string> ReadToken() {
  return control::TokenFromFlags(absl::GetFlag(FLAGS_token), absl::GetFlag(FLAGS_token_file),
                                 "a cluster token is required (--token_file or --token)");
}

// --txn_members, or this node and its --peers.
absl::StatusOr<std::vector<uint32_t>> TxnMembers(uint32_t self, const std::vector<node::PeerAddress>& peers) {
  std::vector<uint32_t> members;
  const std::string flag = absl::GetFlag(FLAGS_txn_members);
  if (flag.empty()) {
    members.push_back(self);
    for (const node::PeerAddress& peer : peers) members.push_back(peer.node_id);
    return members;
  }
  bool listed = false;
  for (absl::string_view part : absl::StrSplit(flag, ',')) {
    uint32_t member = 0;
    if (!absl::SimpleAtoi(part, &member) || member == 0 || member > node::kMaxNodeId) {
      return absl::InvalidArgumentError(absl::StrCat("--txn_members: '", part, "' is not a node id"));
    }
    listed |= member == self;
    members.push_back(member);
  }
  if (!listed) return absl::InvalidArgumentError("--txn_members must list this node");
  return members;
}

// This node's log as found at start: what it serves to restarting peers, and what it restarts from.
struct StartingLog {
  logging::PeerLog log;
  std::shared_ptr<const std::string> snapshot;  // the log as the restart exchange ships it
};

// Reads and validates the log in `dir` (NotFound: a fresh node). Any damage is an error naming the
// directory and key.
absl::StatusOr<StartingLog> ReadStartingLog(uint32_t id, const std::string& dir) {
  StartingLog start;
  start.log.contents.node_id = id;
  if (!dir.empty()) {
    auto contents = logging::ReadLog(dir, id);
    if (contents.ok()) {
      start.log.has_log = true;
      start.log.contents = std::move(*contents);
    } else if (!absl::IsNotFound(contents.status())) {
      return contents.status();
    }
  }
  start.snapshot = std::make_shared<const std::string>(logging::EncodeLogSnapshot(start.log));
  return start;
}

// Every member but this node must be a listed peer: a restart gathers their logs before it serves.
absl::Status CheckPeersListMembers(uint32_t self, const std::vector<node::PeerAddress>& peers,
                                   const std::vector<uint32_t>& members) {
  for (uint32_t member : members) {
    if (member == self) continue;
    bool listed = false;
    for (const node::PeerAddress& peer : peers) listed |= peer.node_id == member;
    if (!listed) {
      return absl::InvalidArgumentError(absl::StrCat("restarting from a log needs every other member in --peers; "
                                                     "node ", member, " is not listed"));
    }
  }
  return absl::OkStatus();
}

// Joins every member and rebuilds this node's memory from every member's log (logging/node_restart.h).
absl::StatusOr<std::unique_ptr<logging::NodeRestore>> RestoreFromMembers(node::Node& node, const logging::LogContents& own,
                                                                         const std::vector<uint32_t>& members,
                                                                         int backups) {
  if (absl::Status joined = node.JoinPeers(); !joined.ok()) return joined;
  auto restore = logging::RestoreNode(node, own, members, backups, node.options().call_timeout);
  if (!restore.ok()) return restore.status();
  return std::make_unique<logging::NodeRestore>(std::move(*restore));
}

// Rebuilds this node's memory from every member's log, the members already connected (with --zk, by the
// configuration).
absl::StatusOr<std::unique_ptr<logging::NodeRestore>> RestoreFromConnected(node::Node& node, const logging::LogContents& own,
                                                                           const std::vector<uint32_t>& members,
                                                                           int backups) {
  auto restore = logging::RestoreNode(node, own, members, backups, node.options().call_timeout);
  if (!restore.ok()) return restore.status();
  return std::make_unique<logging::NodeRestore>(std::move(*restore));
}

// Joins through ZooKeeper. A node restarted right after it was killed finds its old session's member
// znode still there (AlreadyExists) until that session times out: it tries again until `timeout`.
absl::Status JoinWhenFree(coordinator::ZooKeeperCoordinator& coordinator, const coordinator::MemberInfo& me,
                          absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    absl::Status joined = coordinator.Join(me);
    if (!absl::IsAlreadyExists(joined) || absl::Now() >= deadline) return joined;
    absl::SleepFor(absl::Milliseconds(200));
  }
}

// After a restart with --zk: waits until the configuration's data members are exactly the ones this
// node's log recorded, each listed with the incarnation this node is connected to (not a process that
// died, whose member znode lingers until its session times out), with `follower` done applying it (its
// connections are that configuration's, and no older change is still to undo one), and returns it.
absl::StatusOr<coordinator::Configuration> WaitForLoggedMembers(node::Node& node, coordinator::ZooKeeperCoordinator& zk,
                                                                const coordinator::MembershipFollower& follower,
                                                                const std::vector<uint32_t>& logged,
                                                                absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<uint32_t> data, live;
  for (;;) {
    auto configuration = zk.GetConfiguration();
    if (configuration.ok() && follower.applied_epoch() == configuration->epoch()) {
      data = coordinator::DataMemberIds(*configuration);
      const std::map<uint32_t, uint64_t> connected = node.connected_incarnations();
      live.clear();
      for (const coordinator::MemberInfo& member : configuration->members()) {
        auto it = connected.find(member.node_id());
        const bool is_live = member.node_id() == node.id() ? member.incarnation() == node.incarnation()
                                                             : it != connected.end() && it->second == member.incarnation();
        if (is_live) live.push_back(member.node_id());
      }
      bool all = data == logged;
      for (uint32_t member : logged) all = all && std::find(live.begin(), live.end(), member) != live.end();
      if (all) return *std::move(configuration);
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the log's members [", absl::StrJoin(logged, ","), "] did not all come back within ",
          absl::FormatDuration(timeout), ": the configuration's data members are [", absl::StrJoin(data, ","),
          "], of which these are live and connected: [", absl::StrJoin(live, ","),
          "] (every member must restart with its data directory)"));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

// A restart with --zk: waits for the logged members (WaitForLoggedMembers), then gathers their logs. A
// connection made again while the logs are fetched (both sides joining each other) cancels the fetch;
// nothing is written to memory before every log is in, so it waits and tries again, until `timeout`.
absl::StatusOr<std::unique_ptr<logging::NodeRestore>> RestoreThroughZooKeeper(
    node::Node& node, coordinator::ZooKeeperCoordinator& zk, const coordinator::MembershipFollower& follower,
    const logging::LogContents& own, const std::vector<uint32_t>& members, int backups, absl::Duration timeout,
    std::optional<coordinator::Configuration>& configuration) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    auto waited = WaitForLoggedMembers(node, zk, follower, members, deadline - absl::Now());
    if (!waited.ok()) return waited.status();
    configuration = std::move(*waited);
    auto restore = RestoreFromConnected(node, own, members, backups);
    const bool transient = absl::IsCancelled(restore.status()) || absl::IsUnavailable(restore.status());
    if (restore.ok() || !transient || absl::Now() >= deadline) return restore;
    Log(node.id(), absl::StrCat("gathering the logs again: ", restore.status().ToString()));
    absl::SleepFor(absl::Milliseconds(100));
  }
}

// Opens the node's log in `dir`; after a restart, first appends the states only peers had persisted, so
// this node's log covers its memory again. Before the transaction layer runs, so no newer state of the
// same object can be appended ahead of them.
absl::StatusOr<std::unique_ptr<logging::ObjectLog>> OpenNodeLog(uint32_t id, const std::string& dir,
                                                                const logging::NodeRestore* restored) {
  logging::ObjectLogOptions options;
  options.dir = dir;
  options.node_id = id;
  options.sync = absl::GetFlag(FLAGS_log_fsync);
  // A restart restored exactly the log epochs up to the cut; later states in this log are gone for good.
  if (restored != nullptr) options.cut = restored->image.log_epoch;
  auto log = logging::ObjectLog::Open(options);
  if (!log.ok() || restored == nullptr) return log;
  for (const logging::ObjectState& state : restored->adopted) (*log)->Append(state);
  if (absl::Status s = (*log)->WaitForPersisted(absl::Seconds(30)); !s.ok()) {
    Log(id, absl::StrCat("warning: adopted states not yet on disk: ", s.ToString()));
  }
  return log;
}

int Run() {
  node::NodeOptions options;
  options.node_id = absl::GetFlag(FLAGS_node_id);
  if (options.node_id == 0) return BadFlags("--node_id is required (1..65535)");
  options.cluster_name = absl::GetFlag(FLAGS_cluster);
  options.listen_address = absl::GetFlag(FLAGS_listen);
  const std::string zk = absl::GetFlag(FLAGS_zk);
  if (!zk.empty() && !absl::GetFlag(FLAGS_peers).empty()) {
    return BadFlags("give --zk (membership from ZooKeeper) or --peers (a static cluster), not both");
  }
  auto peers = node::ParsePeers(absl::GetFlag(FLAGS_peers));
  if (!peers.ok()) return BadFlags(absl::StrCat("--peers: ", peers.status().message()));
  options.peers = *peers;
  auto memory = node::ParseBytes(absl::GetFlag(FLAGS_memory));
  if (!memory.ok()) return BadFlags(absl::StrCat("--memory: ", memory.status().message()));
  options.memory_bytes = *memory;
  auto region = node::ParseBytes(absl::GetFlag(FLAGS_region_size));
  if (!region.ok()) return BadFlags(absl::StrCat("--region_size: ", region.status().message()));
  options.region_bytes = std::min(*region, options.memory_bytes);
  options.worker_threads = absl::GetFlag(FLAGS_threads);
  options.idle_wait = absl::GetFlag(FLAGS_idle_wait);
  if (options.idle_wait <= absl::ZeroDuration()) return BadFlags("--idle_wait must be positive");
  auto token = ReadToken();
  if (!token.ok()) return BadFlags(std::string(token.status().message()));
  options.cluster_token = *token;
  options.tls.certificate_path = absl::GetFlag(FLAGS_tls_cert);
  options.tls.private_key_path = absl::GetFlag(FLAGS_tls_key);
  options.tls_ca_path = absl::GetFlag(FLAGS_tls_ca);
  options.join_timeout = absl::GetFlag(FLAGS_join_timeout);
  const uint32_t id = options.node_id;
  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);

  // The log first: a damaged one stops startup before anything else is started.
  auto starting = ReadStartingLog(id, data_dir);
  if (!starting.ok()) {
    Log(id, absl::StrCat("node ", id, " cannot restart from its log in ", data_dir, ": ",
                         starting.status().ToString()));
    return 1;
  }
  const bool restart = starting->log.has_log;
  if (restart && !zk.empty() && !starting->log.contents.members.has_value()) {
    Log(id, absl::StrCat("node ", id, " cannot restart from its log in ", data_dir, " with --zk: the log has no ",
                         "member list (m:members; it was written with --peers or by an older fathomd)"));
    return 1;
  }
  if (restart) {
    Log(id, absl::StrCat("log in ", data_dir, ": ", starting->log.contents.states.size(), " objects, position ",
                         starting->log.contents.position));
  }
  // Every node answers restarting peers, with its log or with "no log".
  options.register_handlers = [snapshot = starting->snapshot](msg::Messenger& messenger, int) {
    logging::ServeLogSnapshot(messenger, snapshot);
  };

  // ZooKeeper first: if it cannot be reached, nothing else is worth starting.
  std::unique_ptr<coordinator::ZooKeeperCoordinator> coordinator;
  if (!zk.empty()) {
    coordinator::ZooKeeperCoordinatorOptions zk_options;
    zk_options.connect_string = zk;
    zk_options.cluster = options.cluster_name;
    zk_options.session_timeout = absl::GetFlag(FLAGS_zk_session_timeout);
    zk_options.connect_timeout = options.join_timeout;
    zk_options.join_timeout = options.join_timeout;
    auto created = coordinator::ZooKeeperCoordinator::Create(zk_options);
    if (!created.ok()) {
      Log(id, absl::StrCat("cannot reach ZooKeeper at ", zk, ": ", created.status().ToString()));
      return 1;
    }
    coordinator = std::move(*created);
  }

  // Leases need the request handler on every node thread, so the agent exists before the node starts
  // (and is destroyed after it stops).
  std::unique_ptr<coordinator::LeaseAgent> lease;
  const absl::Duration lease_period = absl::GetFlag(FLAGS_lease_period);
  if (lease_period < absl::ZeroDuration()) return BadFlags("--lease_period must not be negative");
  if (coordinator != nullptr && lease_period > absl::ZeroDuration()) {
    coordinator::LeaseOptions lease_options;
    lease_options.period = lease_period;
    lease = std::make_unique<coordinator::LeaseAgent>(lease_options);
    lease->InstallHandler(&options);
  }

  fabric::UcxOptions ucx;
  ucx.transports = absl::GetFlag(FLAGS_transports);
  auto fabric = fabric::CreateUcxFabric(ucx);
  if (!fabric.ok()) {
    Log(id, absl::StrCat("cannot start the UCX fabric: ", fabric.status().ToString()));
    return 1;
  }
  Log(id, absl::StrCat("starting: ", options.memory_bytes >> 20, " MiB in regions of ", options.region_bytes >> 20,
                       " MiB, ", options.worker_threads, " threads, transports '",
                       ucx.transports.empty() ? "(UCX_TLS or UCX default)" : ucx.transports, "'"));
  std::unique_ptr<logging::ObjectLog> log;  // outlives the node: its threads append to it
  auto node = node::Node::Start(options, std::move(*fabric));
  if (!node.ok()) {
    Log(id, absl::StrCat("cannot start: ", node.status().ToString()));
    return absl::IsInvalidArgument(node.status()) ? 2 : 1;
  }
  Log(id, absl::StrCat("control service on ", (*node)->control_address(), ", incarnation ", (*node)->incarnation()));
  txn::TxnOptions txn_options;
  txn_options.backups = absl::GetFlag(FLAGS_backups);
  std::vector<uint32_t> members;
  if (coordinator == nullptr) {
    auto listed = TxnMembers(id, options.peers);
    absl::Status valid = listed.status();
    if (valid.ok() && restart) valid = CheckPeersListMembers(id, options.peers, *listed);
    if (!valid.ok()) {
      (*node)->Stop();
      return BadFlags(std::string(valid.message()));
    }
    members = *listed;
  }
  // A restart gathers every member's log before the transaction layer exists, so nothing is installed
  // here before memory holds the restored image. (Clients wait for every node's READY line.)
  uint64_t epoch = 1;
  std::unique_ptr<logging::NodeRestore> restored;
  // With --zk the node joins the cluster first; after a restart, before anything else (it gathers the
  // logged members' logs through the connections the configuration makes).
  std::unique_ptr<coordinator::MembershipFollower> follower;
  const coordinator::MemberInfo me = coordinator::MemberInfoFor(**node, options.memory_bytes, FabricKindOf(ucx.transports));
  auto join_zookeeper = [&]() -> bool {
    absl::Status joined = JoinWhenFree(*coordinator, me, options.join_timeout);
    if (!joined.ok()) {
      Log(id, absl::StrCat("cannot join cluster '", options.cluster_name, "' through ZooKeeper at ", zk, ": ",
                           joined.ToString()));
      return false;
    }
    coordinator::MembershipOptions membership;
    if (lease != nullptr) {
      if (absl::Status s = lease->Start(node->get(), coordinator.get()); !s.ok()) {
        Log(id, s.ToString());
        return false;
      }
      membership.lease = lease.get();
      membership.rejoin_as = me;  // removed (lease expired) but alive: join again
    }
    auto started = coordinator::MembershipFollower::Start(node->get(), coordinator.get(), std::move(membership));
    if (!started.ok()) {
      Log(id, started.status().ToString());
      return false;
    }
    follower = std::move(*started);
    return true;
  };
  std::optional<coordinator::Configuration> restart_configuration;
  if (restart && coordinator != nullptr) {
    const logging::LoggedMembers& logged = *starting->log.contents.members;
    members = logged.ids;
    Log(id, absl::StrCat("restarting from ", data_dir, ": waiting for the logged members [",
                         absl::StrJoin(members, ","), "] in ZooKeeper"));
    if (!join_zookeeper()) {
      (*node)->Stop();
      return 1;
    }
  }
  if (restart) {
    Log(id, absl::StrCat("restarting from ", data_dir, ": gathering the logs of ", members.size() - 1, " members"));
    auto restore = coordinator == nullptr
                       ? RestoreFromMembers(**node, starting->log.contents, members, txn_options.backups)
                       : RestoreThroughZooKeeper(**node, *coordinator, *follower, starting->log.contents, members,
                                                 txn_options.backups, options.join_timeout, restart_configuration);
    if (!restore.ok()) {
      Log(id, absl::StrCat("node ", id, " cannot restart: ", restore.status().ToString()));
      (*node)->Stop();
      return 1;
    }
    restored = std::move(*restore);
    epoch = restored->epoch;
    txn_options.restore_backups = restored->BackupRestorer();
  }
  if (!data_dir.empty()) {
    auto opened = OpenNodeLog(id, data_dir, restored.get());
    if (!opened.ok()) {
      Log(id, absl::StrCat("node ", id, " cannot open its log: ", opened.status().ToString()));
      (*node)->Stop();
      return 1;
    }
    log = std::move(*opened);
    (*node)->AddCounterSource(log->CounterSource());
    txn_options.on_install = logging::InstallObserverFor(log.get());
    // Log epochs (consistent whole-cluster restarts, sync durability; txn/log_epochs.h).
    txn_options.epoch_log = logging::EpochLogFor(log.get());
    // Every member starts after the same epoch: 0 when fresh, the restored cut after a restart.
    txn_options.first_log_epoch = log->PersistedEpoch().value_or(0) + 1;
    txn_options.start_log_epochs = false;  // once the members are set below
    // With --zk this node may join a running cluster: it takes the epoch from the driver (the
    // configuration manager) and grants no lock before.
    txn_options.join_log_epochs = coordinator != nullptr;
  }
  // The transaction layer, before any peer can send it a record.
  auto txns = txn::TransactionService::Attach(node->get(), txn_options);
  if (!txns.ok()) {
    Log(id, absl::StrCat("cannot start transactions: ", txns.status().ToString()));
    (*node)->Stop();
    return 1;
  }
  if (restored != nullptr) {
    Log(id, absl::StrCat("restored ", restored->primaries, " objects in its regions, ", restored->backups,
                         " in backup copies (", restored->adopted.size(), " only peers had logged); epoch ", epoch));
    const uint64_t primaries = restored->primaries, backups = restored->backups, adopted = restored->adopted.size();
    (*node)->AddCounterSource([primaries, backups, adopted](std::map<std::string, uint64_t>& counters) {
      counters["restart.primaries"] = primaries;
      counters["restart.backups"] = backups;
      counters["restart.adopted"] = adopted;
    });
  }
  txn::TransactionService* service = txns->get();
  (*node)->AddCounterSource([service, backups = txn_options.backups](std::map<std::string, uint64_t>& counters) {
    counters["txn.epoch"] = service->replicas()->epoch();
    counters["txn.members"] = service->replicas()->members().size();  // data members (backups come from them)
    counters["node.threads"] = service->threads();  // a joining client-only member must run as many
    counters["txn.backups"] = backups;  // and replicate its commits to as many backups
    if (const txn::LogEpochs* epochs = service->log_epochs(); epochs != nullptr) {
      counters["txn.log_epoch"] = epochs->current();
      counters["txn.log_epoch_closing"] = epochs->closing();
    }
  });
  if (coordinator == nullptr) {
    (*txns)->SetConfiguration(epoch, members);
    (*txns)->StartLogEpochs();
  } else if (restart_configuration.has_value()) {
    // Transaction ids carry the configuration epoch: ZooKeeper's is past every logged one.
    (*txns)->SetConfiguration(restart_configuration->epoch(), members);
  }
  if (!options.peers.empty() && !restart) {
    Log(id, absl::StrCat("joining ", options.peers.size(), " peers"));
    if (absl::Status joined = (*node)->JoinPeers(); !joined.ok()) {
      Log(id, joined.ToString());
      (*node)->Stop();
      return 1;
    }
  }
  std::unique_ptr<coordinator::Subscription> txn_subscription;
  std::unique_ptr<kv::CoordinatorCatalog> catalog;  // tables' names live in the configuration
  if (coordinator != nullptr) {
    if (follower == nullptr && !join_zookeeper()) {
      (*node)->Stop();
      return 1;
    }
    // Transactions replicate over the members that hold data: a client-only member (a YCSB driver that
    // joined) coordinates transactions but is never a region's backup.
    // The configuration manager drives log epochs: it changes only when it leaves, unlike the smallest id
    // (a node joining with a smaller one would start driving from its own epoch). This node takes part
    // once it is one of the data members.
    // Each change of the data members goes to the log too: a restart waits for the last ones.
    logging::ObjectLog* node_log = log.get();
    txn_subscription = coordinator->Subscribe([service, id, node_log](const coordinator::Configuration& configuration) {
      std::vector<uint32_t> members = coordinator::DataMemberIds(configuration);
      const bool member = std::find(members.begin(), members.end(), id) != members.end();
      if (node_log != nullptr && member) node_log->RecordMembers({configuration.epoch(), members});
      service->SetLogEpochDriver(configuration.manager_id());
      service->SetConfiguration(configuration.epoch(), std::move(members));
      if (member) service->StartLogEpochs();
    });
    coordinator::ZooKeeperCoordinator* c = coordinator.get();
    coordinator::MembershipFollower* f = follower.get();
    (*node)->AddCounterSource([c, f](std::map<std::string, uint64_t>& counters) {
      counters["coordinator.connected"] = c->state() == coordinator::CoordinatorState::kConnected;
      counters["coordinator.manager"] = c->is_manager();
      if (auto configuration = c->GetConfiguration(); configuration.ok()) {
        counters["coordinator.epoch"] = configuration->epoch();
        counters["coordinator.members"] = configuration->members_size();
      }
      counters["coordinator.applied_epoch"] = f->applied_epoch();
      counters["coordinator.rejoins"] = f->rejoins();
    });
    // Table calls (fathomctl table ...) are served once this node is a member with its transaction layer.
    catalog = std::make_unique<kv::CoordinatorCatalog>(coordinator.get());
    (*node)->SetTableCalls(std::make_shared<TableAdmin>(service, catalog.get()));
    Log(id, absl::StrCat("member of cluster '", options.cluster_name, "' through ZooKeeper at ", zk,
                         lease != nullptr ? absl::StrCat(", lease ", absl::FormatDuration(lease_period)) : ""));
  }
  std::vector<std::string> connected;
  for (uint32_t peer : (*node)->connected_peers()) connected.push_back(absl::StrCat(peer));
  Log(id, absl::StrCat("ready; peers: [", absl::StrJoin(connected, ","), "]"));
  std::cout << "READY node=" << id << " control=" << (*node)->control_address() << std::endl;

  // Signals were blocked before any thread started, so only this loop sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  std::string reason;
  while (reason.empty()) {
    timespec tick{0, 100'000'000};
    const int signal = sigtimedwait(&signals, nullptr, &tick);
    if (signal == SIGTERM || signal == SIGINT) reason = signal == SIGTERM ? "SIGTERM" : "SIGINT";
    if ((*node)->shutdown_requested()) reason = "a Shutdown call";
  }
  Log(id, absl::StrCat("stopping (", reason, ")"));
  (*node)->SetTableCalls(nullptr);  // no table call may outlive the catalog and the transaction layer
  if (lease != nullptr) lease->Stop();  // before the follower: a removal now is the shutdown's, not a lease's
  follower.reset();
  txn_subscription.reset();
  if (coordinator != nullptr) coordinator->Leave().IgnoreError();
  (*node)->Stop();  // before the transaction layer goes: the node's threads use it
  if (log != nullptr) log->Stop();  // writes what is queued
  Log(id, "stopped");
  return 0;
}

}  // namespace
}  // namespace fathom::server

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("fathomd: one node of a Fathom cluster. See the header of server/fathomd_main.cc.");
  absl::ParseCommandLine(argc, argv);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return fathom::server::Run();
}
