// See server.h. The order of Start is the order things must exist in: the log is read before anything runs
// (a damaged one stops startup), the coordinator is reached before the node starts (nothing else is worth
// starting without it), the lease handler is installed before the node's threads run, a restart gathers
// every member's log before the transaction layer exists, and the transaction layer is attached before
// any peer can send it a record.
#include "server/server.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "platform/base/status_macros.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "coordinator/placement.h"
#include "coordinator/remap.h"
#include "coordinator/zookeeper_coordinator.h"
#include "kv/coordinator_catalog.h"
#include "kv/get_at_owner.h"
#include "logging/log_exchange.h"
#include "logging/txn_hook.h"
#include "txn/records.h"
#include "platform/fabric/ucx/ucx_fabric.h"
#include "platform/node/control/host_port.h"
#include "server/restart.h"
#include "server/table_admin.h"

namespace fathom::server {
namespace {

// A member's vote against the CM counts this many lease periods (members vote at most once a period).
constexpr int kSuspicionWindowPeriods = 2;

// What the coordinator records about a UCX transport list.
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

// Prefixes an error with what could not be done, keeping its code.
absl::Status Annotate(const absl::Status& status, const std::string& what) {
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  std::unique_ptr<Server> server(new Server());
  server->options_ = std::move(options);
  server->id_ = server->options_.node.node_id;
  if (absl::Status started = server->StartAll(); !started.ok()) {
    server->Stop();
    return started;
  }
  return server;
}

Server::~Server() { Stop(); }

void Server::Log(const std::string& line) const {
  if (options_.log_line) options_.log_line(line);
}

absl::Status Server::StartAll() {
  if (absl::Status valid = CheckOptions(); !valid.ok()) return valid;
  // The log first: a damaged one stops startup before anything else is started.
  auto starting = ReadStartingLog(id_, options_.data_dir, options_.log_env);
  if (!starting.ok()) {
    return Annotate(starting.status(),
                    absl::StrCat("node ", id_, " cannot restart from its log in ", options_.data_dir));
  }
  const bool restart = starting->log.has_log;
  if (restart && coordinated() && !starting->log.contents.members.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node ", id_, " cannot restart from its log in ", options_.data_dir, " with --zk: the log has no member ",
        "list (m:members; it was written with --peers or by an older fathomd)"));
  }
  if (restart) {
    Log(absl::StrCat("log in ", options_.data_dir, ": ", starting->log.contents.states.size(),
                     " objects, position ", starting->log.contents.position));
  }
  if (absl::Status started = StartNode(starting->snapshot); !started.ok()) return started;
  // Without a log to keep, its memory holds nothing of an earlier incarnation: what the configuration
  // still lists on this id must not come back to it (admission.h). With a --data_dir but no log (a wiped
  // or mistyped directory) it says nothing: the placement stays as the other members' logs need it, and
  // their restart names the node that has none (docs/formats/ssd-log.md).
  me_.set_starts_empty(!restart && options_.data_dir.empty());

  // Static clusters: the data members from the options; with a coordinator, from the configuration
  // (after a restart, first the ones the log recorded).
  std::vector<uint32_t> members = StaticMembers();
  if (restart && !coordinated()) {
    if (absl::Status listed = CheckPeersListMembers(id_, options_.node.peers, members); !listed.ok()) return listed;
  }
  txn::TxnOptions txn_options = options_.transactions;
  if (lease_ != nullptr) {
    txn_options.lease_lapsed = [lease = lease_.get()] { return lease->LeaseLapsed(); };
    txn_options.lease_term = [lease = lease_.get()] { return lease->term(); };
    txn_options.lease_configuration = [lease = lease_.get()] { return lease->configuration_epoch(); };
  }
  uint64_t epoch = 1;
  std::optional<coordinator::Configuration> restart_configuration;
  if (restart) {
    if (coordinated()) members = starting->log.contents.members->ids;
    if (absl::Status restored = Restore(starting->log.contents, members, restart_configuration); !restored.ok()) {
      return restored;
    }
    epoch = restored_->epoch;
    txn_options.restore_backups = restored_->BackupRestorer();
  }
  if (!options_.data_dir.empty()) {
    if (absl::Status opened = OpenLog(txn_options); !opened.ok()) {
      return Annotate(opened, absl::StrCat("node ", id_, " cannot open its log"));
    }
  }
  if (!options_.attach_transactions) return JoinWithoutTransactions();

  // The transaction layer, before any peer can send it a record.
  auto txns = txn::TransactionService::Attach(node_.get(), txn_options);
  if (!txns.ok()) return Annotate(txns.status(), "cannot start transactions");
  txns_ = std::move(*txns);
  if (absl::Status served = kv::ServeGetsAtOwner(*txns_); !served.ok()) {
    return Annotate(served, "cannot serve GETs at the owner");
  }
  attached_txns_.store(txns_.get(), std::memory_order_release);
  if (restored_ != nullptr) {
    Log(absl::StrCat("restored ", restored_->primaries, " objects in its regions, ", restored_->backups,
                     " in backup copies (", restored_->adopted.size(), " only peers had logged); epoch ", epoch));
  }
  AddCounters();
  if (!coordinated()) {
    // A static cluster's placement is the rule over its fixed members (memory/region_map.h).
    node_->region_directory().Set(memory::RegionMap::ByOwner(
        options_.configuration_epoch != 0 ? options_.configuration_epoch : epoch, members,
        options_.transactions.backups));
    if (!options_.client_only) txns_->StartLogEpochs();
    if (options_.node.peers.empty() || restart) return absl::OkStatus();  // a restart joined them already
    Log(absl::StrCat("joining ", options_.node.peers.size(), " peers"));
    return node_->JoinPeers();
  }
  return FollowConfiguration();
}

absl::Status Server::CheckOptions() const {
  const ServerOptions& o = options_;
  if (!o.zookeeper.empty() && o.coordinator != nullptr) {
    return absl::InvalidArgumentError("give a ZooKeeper connect string or a coordinator, not both");
  }
  if (coordinated() && !o.node.peers.empty()) {
    return absl::InvalidArgumentError("give --zk (membership from ZooKeeper) or --peers (a static cluster), not both");
  }
  if (o.client_only && !coordinated() && o.txn_members.empty()) {
    return absl::InvalidArgumentError("a client-only member of a static cluster needs the data members");
  }
  if (!coordinated() && !o.txn_members.empty() &&
      o.client_only == (std::find(o.txn_members.begin(), o.txn_members.end(), id_) != o.txn_members.end())) {
    return absl::InvalidArgumentError(o.client_only ? "a client-only node cannot be one of the data members"
                                                    : "--txn_members must list this node");
  }
  if (o.client_only && !o.data_dir.empty()) return absl::InvalidArgumentError("a client-only member has no log");
  if (!o.attach_transactions && !o.data_dir.empty()) {
    return absl::InvalidArgumentError("a log needs the transaction layer");
  }
  if (o.lease_period < absl::ZeroDuration()) return absl::InvalidArgumentError("--lease_period must not be negative");
  if (o.transactions.backups < 0) return absl::InvalidArgumentError("--backups must not be negative");
  return absl::OkStatus();
}

std::vector<uint32_t> Server::StaticMembers() const {
  if (!options_.txn_members.empty()) return options_.txn_members;
  std::vector<uint32_t> members = {id_};
  for (const node::PeerAddress& peer : options_.node.peers) members.push_back(peer.node_id);
  return members;
}

// The coordinator (reached first: without it nothing else is worth starting), the lease agent (its handler
// must be on every node thread before the node starts), the fabric, and the node.
absl::Status Server::StartNode(std::shared_ptr<const std::string> log_snapshot) {
  ServerOptions& o = options_;
  // Every node answers restarting peers, with its log or with "no log". The caller's handlers are
  // registered first: a message type keeps its first handler, so a test may serve its own snapshot.
  std::function<void(msg::Messenger&, int)> customized = o.node.register_handlers;
  o.node.register_handlers = [log_snapshot, customized](msg::Messenger& messenger, int thread) {
    if (customized) customized(messenger, thread);
    logging::ServeLogSnapshot(messenger, log_snapshot);
  };
  coordinator_ = o.coordinator;
  if (!o.zookeeper.empty()) {
    coordinator::ZooKeeperCoordinatorOptions zk;
    zk.connect_string = o.zookeeper;
    zk.cluster = o.node.cluster_name;
    zk.token = o.node.cluster_token;
    zk.session_timeout = o.zookeeper_session_timeout;
    // Leases outlive a ZooKeeper outage: the CM keeps granting them while its session may still live,
    // and stops a lease of its own (and one more for margin) before the server could elect another CM.
    if (o.lease_period > absl::ZeroDuration()) {
      zk.manager_hold = std::max(absl::ZeroDuration(), o.zookeeper_session_timeout - 2 * o.lease_period);
    }
    if (o.lease_period > absl::ZeroDuration()) zk.suspicion_window = kSuspicionWindowPeriods * o.lease_period;
    zk.connect_timeout = o.node.join_timeout;
    zk.join_timeout = o.node.join_timeout;
    zk.store = o.zookeeper_store;
    zk.client = o.node.node_id;
    zk.clock = o.node.clock;
    zk.executor = o.node.executor;
    auto created = coordinator::ZooKeeperCoordinator::Create(zk);
    if (!created.ok()) return Annotate(created.status(), absl::StrCat("cannot reach ZooKeeper at ", o.zookeeper));
    owned_coordinator_ = std::move(*created);
    coordinator_ = owned_coordinator_.get();
  }
  if (coordinated() && o.lease_period > absl::ZeroDuration()) {
    coordinator::LeaseOptions lease;
    lease.period = o.lease_period;
    // A voter confirms no grant of the CM it voted out while its vote counts, and a period more.
    lease.vote_silence = (kSuspicionWindowPeriods + 1) * o.lease_period;
    if (o.lease_clock != nullptr) {
      lease.clock = o.lease_clock;
      lease.background = false;
    } else if (o.node.executor != nullptr) {
      lease.clock = o.node.clock;  // ticked by a task on the executor (StartLeaseTicks)
      lease.background = false;
    }
    lease_ = std::make_unique<coordinator::LeaseAgent>(lease);
    lease_->InstallHandler(&o.node);
  }
  // The transaction layer attaches after the node has joined, and the log-epoch driver may already be
  // writing to it (a client that got its lease quickly): those messages are dropped, not held against
  // the ring, and the driver repeats them.
  o.node.register_handlers = [user = std::move(o.node.register_handlers)](msg::Messenger& messenger, int thread) {
    messenger.Expect(txn::kLogEpochMessage);
    if (user) user(messenger, thread);
  };
  if (o.fabric == nullptr) {
    fabric::UcxOptions ucx;
    ucx.transports = o.transports;
    auto fabric = fabric::CreateUcxFabric(ucx);
    if (!fabric.ok()) return Annotate(fabric.status(), "cannot start the UCX fabric");
    o.fabric = std::move(*fabric);
    Log(absl::StrCat("starting: ", o.node.memory_bytes >> 20, " MiB in regions of ", o.node.region_bytes >> 20,
                     " MiB, ", o.node.worker_threads, " threads, transports '",
                     o.transports.empty() ? "(UCX_TLS or UCX default)" : o.transports, "'"));
  }
  if (o.fabric_kind == coordinator::FABRIC_KIND_UNSPECIFIED) o.fabric_kind = FabricKindOf(o.transports);
  auto node = node::Node::Start(o.node, std::move(o.fabric));
  if (!node.ok()) return Annotate(node.status(), "cannot start");
  node_ = std::move(*node);
  Log(absl::StrCat("control service on ", node_->control_address(), ", incarnation ", node_->incarnation()));
  if (!o.client_only) {
    Log(absl::StrCat(node_->huge_page_bytes() >> 20, " MiB of its regions on huge pages",
                     node_->huge_page_bytes() == 0 ? " (the host has none free: sysctl vm.nr_hugepages)" : ""));
  }
  me_ = coordinator::MemberInfoFor(*node_, o.client_only ? 0 : o.node.memory_bytes, o.fabric_kind);
  me_.set_client_only(o.client_only);
  if (o.client_only) me_.clear_regions();  // it holds no data: nothing of its memory is placed
  me_.set_backups_per_region(static_cast<uint32_t>(o.transactions.backups));
  me_.set_failure_domain(o.failure_domain);
  if (lease_ != nullptr && o.lease_channel && o.lease_clock == nullptr && o.node.executor == nullptr) {
    const std::string address = node_->control_address();
    absl::StatusOr<control::HostPort> listening = control::ParseHostPort(address, control::PortZero::kAllowed);
    if (!listening.ok()) return Annotate(listening.status(), "the control service's address");
    const std::string& host = listening->host;
    if (host == "0.0.0.0" || host == "::") {
      Log(absl::StrCat("leases over the node runtime: the control service listens on every address (", address,
                       "), so there is no one address to publish a lease channel on"));
    } else {
      auto channel = lease_->OpenChannel(host, node_->id());
      if (!channel.ok()) return Annotate(channel.status(), "cannot open the lease channel");
      me_.set_lease_address(*channel);
      Log(absl::StrCat("lease channel on ", *channel));
    }
  }
  return absl::OkStatus();
}

// Gathers every member's log and rebuilds memory from the cut they all closed, before the transaction
// layer exists (so nothing is installed here first). With a coordinator the node joins the cluster first:
// it gathers the logged members' logs through the connections the configuration makes.
absl::Status Server::Restore(const logging::LogContents& own, const std::vector<uint32_t>& members,
                             std::optional<coordinator::Configuration>& configuration) {
  const int backups = options_.transactions.backups;
  if (coordinated()) {
    Log(absl::StrCat("restarting from ", options_.data_dir, ": waiting for the logged members [",
                     absl::StrJoin(members, ","), "] in ZooKeeper"));
    if (absl::Status joined = JoinCoordinator(); !joined.ok()) return joined;
  }
  Log(absl::StrCat("restarting from ", options_.data_dir, ": gathering the logs of ", members.size() - 1,
                   " members"));
  auto restore = coordinated()
                     ? RestoreThroughCoordinator(*node_, *coordinator_, *follower_, own, members,
                                                 options_.node.join_timeout,
                                                 [this](const std::string& line) { Log(line); }, configuration)
                     : RestoreFromPeers(*node_, own, members, backups);
  if (!restore.ok()) {
    // A log that does not fit this node (less memory than its regions) is a failed precondition of the
    // restart, not a bad option: InvalidArgument is kept for options.
    const absl::Status refused = absl::IsInvalidArgument(restore.status())
                                     ? absl::FailedPreconditionError(restore.status().message())
                                     : restore.status();
    return Annotate(refused, absl::StrCat("node ", id_, " cannot restart"));
  }
  restored_ = std::move(*restore);
  return absl::OkStatus();
}

// A node without the transaction layer only joins: its peers, or the configuration.
absl::Status Server::JoinWithoutTransactions() {
  if (!coordinated()) return options_.node.peers.empty() ? absl::OkStatus() : node_->JoinPeers();
  if (absl::Status joined = JoinCoordinator(); !joined.ok()) return joined;
  return options_.client_only ? WaitForDataMembers() : absl::OkStatus();
}

// Transactions replicate over the members that hold data: a client-only member coordinates transactions
// but is never a region's backup. The configuration manager drives log epochs: it changes only when it
// leaves, unlike the smallest id (a node joining with a smaller one would start driving from its own
// epoch). This node takes part once it is one of the data members. Each change of the data members goes
// to the log too: a restart waits for the last ones.
absl::Status Server::FollowConfiguration() {
  txn::TransactionService* service = txns_.get();
  logging::ObjectLog* node_log = log_.get();
  const uint32_t id = id_;
  memory::RegionDirectory* regions = &node_->region_directory();
  txn_subscription_ = coordinator_->Subscribe([service, id, node_log,
                                               regions](const coordinator::Configuration& configuration) {
    // The placement first (StartFollower's subscription, registered later, runs after this one): log
    // epochs take their members from it.
    regions->Set(coordinator::RegionMapOf(configuration));
    std::vector<uint32_t> data = coordinator::DataMemberIds(configuration);
    const bool member = std::find(data.begin(), data.end(), id) != data.end();
    if (node_log != nullptr && member) node_log->RecordMembers({configuration.epoch(), data});
    service->SetLogEpochDriver(configuration.manager_id());
    if (member) service->StartLogEpochs();
  });
  if (follower_ == nullptr) {  // a restart joined already
    if (absl::Status joined = JoinCoordinator(); !joined.ok()) return joined;
  }
  catalog_ = std::make_unique<kv::CoordinatorCatalog>(coordinator_);
  if (options_.client_only) return WaitForDataMembers();
  // Table calls (fathomctl table ...) are served once this node is a member with its transaction layer.
  node_->SetTableCalls(std::make_shared<TableAdmin>(txns_.get(), catalog_.get()));
  node_->SetReplicaDigestSource([txns = txns_.get()]() -> absl::StatusOr<std::vector<control::ReplicaDigest>> {
    ASSIGN_OR_RETURN(std::vector<txn::TransactionService::ReplicaDigest> digests, txns->ReplicaDigests());
    std::vector<control::ReplicaDigest> out;
    for (const auto& d : digests) {
      control::ReplicaDigest& r = out.emplace_back();
      r.set_region_id(d.region);
      r.set_primary(d.primary);
      r.set_digest(d.digest);
      r.set_objects(d.objects);
    }
    return out;
  });
  Log(absl::StrCat("member of cluster '", options_.node.cluster_name, "'",
                   options_.zookeeper.empty() ? "" : absl::StrCat(" through ZooKeeper at ", options_.zookeeper),
                   lease_ != nullptr ? absl::StrCat(", lease ", absl::FormatDuration(options_.lease_period)) : ""));
  return WaitForFirstLease();
}

// A member is ready once the CM granted it a lease: before that, its follower keeps only the CM's
// connection, so clients that connected to a node just started lost their connection at its next
// configuration (and its commits would be refused).
absl::Status Server::WaitForFirstLease() {
  // With a lease_clock the caller ticks the leases, after Start returns.
  if (lease_ == nullptr || options_.lease_clock != nullptr) return absl::OkStatus();
  if (WaitUntil([this] { return lease_->HoldsLease(); }, options_.node.join_timeout, absl::Milliseconds(10))) {
    return absl::OkStatus();
  }
  return absl::DeadlineExceededError(absl::StrCat("node ", id_, " was granted no lease by the CM within ",
                                                  absl::FormatDuration(options_.node.join_timeout)));
}

bool Server::WaitUntil(const std::function<bool()>& done, absl::Duration timeout, absl::Duration poll) const {
  return node::WaitUntil(options_.node.executor, *options_.node.clock, done, timeout, poll);
}

void Server::StartLeaseTicks() {
  node::Executor* executor = options_.node.executor;
  if (executor == nullptr || options_.lease_clock != nullptr) return;  // its own thread, or the caller's
  // As the agent's own thread does: twice per renewal interval (lease_agent.cc).
  const absl::Duration every = options_.lease_period / 16;
  lease_task_ = executor->AddTask(id_, [lease = lease_.get(), clock = options_.node.clock, every,
                                        next = absl::InfinitePast()]() mutable -> size_t {
    const absl::Time now = clock->Now();
    if (now < next) return 0;
    next = now + every;
    lease->Tick();
    return 0;  // a tick is not work that should keep virtual time from moving
  });
}

// Joins the configuration (again while an old incarnation's registration lingers), then holds a lease and
// follows the configuration.
absl::Status Server::JoinCoordinator() {
  const std::string cluster = options_.node.cluster_name;
  if (absl::Status joined = JoinWhenFree(*node_, *coordinator_, me_, options_.node.join_timeout); !joined.ok()) {
    return Annotate(joined, absl::StrCat("cannot join cluster '", cluster, "'",
                                         options_.zookeeper.empty() ? "" : absl::StrCat(" through ZooKeeper at ",
                                                                                         options_.zookeeper),
                                         options_.client_only ? absl::StrCat(" as client-only node ", id_) : ""));
  }
  joined_ = true;
  if (absl::Status listed = WaitUntilListed(); !listed.ok()) return listed;
  if (lease_ != nullptr) {
    if (absl::Status s = lease_->Start(node_.get(), coordinator_); !s.ok()) return s;
    StartLeaseTicks();
    coordinator::LeaseAgent* lease = lease_.get();
    // Seen alive: it granted or renewed a lease here, or this node's follower joined it (a CM killed
    // right after a member joined may never have granted it one): LeaseAgent::SawAlive.
    coordinator_->SetFailureWitness(
        [lease](uint32_t node, uint64_t incarnation) { return lease->Witness(node, incarnation); });
  }
  return StartFollower();
}

absl::Status Server::StartFollower() {
  // Who holds what follows every configuration (transaction ids carry its epoch too; after a restart the
  // coordinator's epoch is past every logged one).
  memory::RegionDirectory* regions = &node_->region_directory();
  placement_subscription_ = coordinator_->Subscribe(
      [regions](const coordinator::Configuration& configuration) { regions->Set(coordinator::RegionMapOf(configuration)); });
  coordinator::MembershipOptions membership;
  if (lease_ != nullptr) {
    membership.lease = lease_.get();
    membership.rejoin_as = me_;  // removed (lease expired) but alive: join again
    membership.rejoin_as->set_starts_empty(false);  // with the memory it has
    membership.on_removed = [this] { ForgetAfterRemoval(); };
  }
  if (!options_.client_only) {
    membership.recover = [this](const coordinator::Configuration& configuration) { return Recover(configuration); };
  }
  auto follower = coordinator::MembershipFollower::Start(node_.get(), coordinator_, std::move(membership));
  if (!follower.ok()) return follower.status();
  follower_ = std::move(*follower);
  absl::MutexLock lock(&counted_follower_mu_);
  counted_follower_ = follower_.get();
  return absl::OkStatus();
}

// Subscribers hear configurations on their own thread, after Join has seen them: a follower started before
// they heard one listing this node could be handed an older one without it, take it for a removal, and
// leave and join again (one needless configuration change each way).
absl::Status Server::WaitUntilListed() {
  const uint32_t id = id_;
  std::atomic<uint64_t>* listed = &listed_epoch_;
  listed_subscription_ = coordinator_->Subscribe([listed, id](const coordinator::Configuration& configuration) {
    if (coordinator::FindMember(configuration, id) != nullptr) listed->store(configuration.epoch());
  });
  WaitUntil([this] { return listed_epoch_.load() != 0; }, options_.node.join_timeout, absl::Milliseconds(5));
  listed_subscription_.reset();  // its one question is answered (or timed out)
  if (listed_epoch_.load() == 0) return absl::DeadlineExceededError("no configuration listing this node arrived");
  return absl::OkStatus();
}

// Until this node holds its lease (WaitForFirstLease) and is connected to every data member of the
// configuration it applied (so its first transaction finds every primary and backup), and the transaction
// layer has that configuration.
absl::Status Server::WaitForDataMembers() {
  if (absl::Status leased = WaitForFirstLease(); !leased.ok()) return leased;
  std::vector<uint32_t> missing;
  const bool connected = WaitUntil(
      [&] {
        auto config = coordinator_->GetConfiguration();
        if (!config.ok() || follower_->applied_epoch() < config->epoch() ||
            txns_->replicas()->epoch() < config->epoch()) {
          return false;
        }
        const std::vector<uint32_t> peers = node_->connected_peers();
        const std::vector<uint32_t> data = coordinator::DataMemberIds(*config);
        missing.clear();
        for (uint32_t member : data) {
          if (std::find(peers.begin(), peers.end(), member) == peers.end()) missing.push_back(member);
        }
        return missing.empty() && !data.empty();
      },
      options_.node.join_timeout, absl::Milliseconds(20));
  if (connected) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat(
      "client node ", id_, " is not connected to members [", absl::StrJoin(missing, ","), "] after ",
      absl::FormatDuration(options_.node.join_timeout),
      " (every node of a cluster runs the same number of threads: this one runs ", options_.node.worker_threads,
      ")"));
}

// Opens the node's log and gives the transaction layer its hooks; after a restart, first appends the
// states only peers had persisted, so this node's log covers its memory again (before the transaction
// layer runs, so no newer state of the same object can be appended ahead of them).
absl::Status Server::OpenLog(txn::TxnOptions& txn_options) {
  logging::ObjectLogOptions options;
  options.dir = options_.data_dir;
  options.node_id = id_;
  options.sync = options_.log_fsync;
  options.env = options_.log_env;
  // On the node's executor and clock, as the rest of its control plane (the simulation runs it so).
  options.executor = options_.node.executor;
  if (options_.node.clock != nullptr) options.clock = options_.node.clock;
  // A restart restored exactly the log epochs up to the cut; later states in this log are gone for good.
  if (restored_ != nullptr) options.cut = restored_->image.log_epoch;
  auto log = logging::ObjectLog::Open(options);
  if (!log.ok()) return log.status();
  log_ = std::move(*log);
  node_->AddCounterSource(log_->CounterSource());
  if (restored_ != nullptr) {
    for (const logging::ObjectState& state : restored_->adopted) log_->Append(state);
    if (absl::Status s = log_->WaitForPersisted(absl::Seconds(30)); !s.ok()) {
      Log(absl::StrCat("warning: adopted states not yet on disk: ", s.ToString()));
    }
  }
  txn_options.on_install = logging::InstallObserverFor(log_.get());
  // Log epochs (consistent whole-cluster restarts, sync durability; txn/log_epochs.h).
  txn_options.epoch_log = logging::EpochLogFor(log_.get());
  // Every member starts after the same epoch: 0 when fresh, the restored cut after a restart.
  txn_options.first_log_epoch = log_->PersistedEpoch().value_or(0) + 1;
  txn_options.start_log_epochs = false;  // once the members are set
  // With a coordinator this node may join a running cluster: it takes the epoch from the driver (the
  // configuration manager) and grants no lock before.
  txn_options.join_log_epochs = coordinated();
  return absl::OkStatus();
}

void Server::AddCounters() {
  if (restored_ != nullptr) {
    const uint64_t primaries = restored_->primaries, backups = restored_->backups, adopted = restored_->adopted.size();
    node_->AddCounterSource([primaries, backups, adopted](std::map<std::string, uint64_t>& counters) {
      counters["restart.primaries"] = primaries;
      counters["restart.backups"] = backups;
      counters["restart.adopted"] = adopted;
    });
  }
  txn::TransactionService* service = txns_.get();
  node_->AddCounterSource([service, backups = options_.transactions.backups](std::map<std::string, uint64_t>& counters) {
    counters["txn.epoch"] = service->replicas()->epoch();
    counters["txn.members"] = service->replicas()->members().size();  // data members (backups come from them)
    counters["node.threads"] = service->threads();  // a joining client-only member must run as many
    counters["txn.backups"] = backups;  // and replicate its commits to as many backups
    if (const txn::LogEpochs* epochs = service->log_epochs(); epochs != nullptr) {
      counters["txn.log_epoch"] = epochs->current();
      counters["txn.log_epoch_closing"] = epochs->closing();
    }
  });
  if (coordinator_ == nullptr) return;
  coordinator::Coordinator* c = coordinator_;
  // The follower starts later (or already did, after a restart), and goes before the node stops serving
  // Stats: read it through the server.
  node_->AddCounterSource([this, c](std::map<std::string, uint64_t>& counters) {
    counters["coordinator.connected"] = c->state() == coordinator::CoordinatorState::kConnected;
    counters["coordinator.manager"] = c->is_manager();
    if (auto configuration = c->GetConfiguration(); configuration.ok()) {
      counters["coordinator.epoch"] = configuration->epoch();
      counters["coordinator.members"] = configuration->members_size();
    }
    absl::MutexLock lock(&counted_follower_mu_);
    if (counted_follower_ != nullptr) {
      counters["coordinator.applied_epoch"] = counted_follower_->applied_epoch();
      counters["coordinator.rejoins"] = counted_follower_->rejoins();
    }
  });
}

void Server::PauseMembership() {
  {
    absl::MutexLock lock(&counted_follower_mu_);
    counted_follower_ = nullptr;
  }
  follower_.reset();
}

absl::Status Server::ResumeMembership() {
  if (coordinator_ == nullptr) return absl::FailedPreconditionError("a static cluster has no membership to follow");
  if (follower_ != nullptr) return absl::OkStatus();
  return StartFollower();
}

void Server::ForgetAfterRemoval() {
  txn::TransactionService* txns = attached_txns_.load(std::memory_order_acquire);
  if (txns == nullptr) return;
  absl::StatusOr<size_t> forgotten = txns->ForgetParticipationAfterRemoval();
  if (!forgotten.ok()) {
    Log(absl::StrCat("removed while alive; letting go of its transactions failed: ", forgotten.status().ToString()));
  } else if (*forgotten > 0) {
    Log(absl::StrCat("removed while alive: let go of ", *forgotten,
                     " transaction(s) it held records of (decided without it); joining again"));
  }
}

coordinator::RecoveryStep Server::Recover(const coordinator::Configuration& configuration) {
  coordinator::RecoveryStep result;
  const uint64_t epoch = configuration.epoch();
  txn::TransactionService* txns = attached_txns_.load(std::memory_order_acquire);
  // Until the transaction layer is attached and the placement of `epoch` set, there is nothing to judge by.
  if (txns == nullptr || node_->region_directory().Current()->epoch() < epoch) {
    result.waiting = true;
    return result;
  }
  // Waiting is normal while the cluster reconfigures: said at most once a second.
  const Clock& clock = *options_.node.clock;
  auto log_waiting = [this, &clock](const std::string& line) {
    if (clock.Now() - recovery_logged_ < absl::Seconds(1)) return;
    recovery_logged_ = clock.Now();
    Log(line);
  };
  std::string waiting_for;
  std::vector<uint32_t> members;  // a member whose connection dropped may owe a promoted region records
  for (const coordinator::MemberInfo& member : configuration.members()) members.push_back(member.node_id());
  absl::StatusOr<std::vector<uint32_t>> served = txns->ServePromotedRegions(members, &waiting_for);
  if (!served.ok()) {
    log_waiting(absl::StrCat("cannot serve a promoted region yet: ", served.status().ToString()));
  } else {
    if (!waiting_for.empty()) log_waiting(absl::StrCat("promoted regions wait: ", waiting_for));
    // How long the promotion waited (in earlier passes) and for what, last: the regions' unavailability.
    const absl::Time now = clock.Now();
    for (uint32_t region : *served) {
      Log(absl::StrCat("serves region ", region, " as its primary (promoted backup)",
                       promotion_waiting_since_ == absl::InfinitePast()
                           ? ""
                           : absl::StrCat(" after waiting ", absl::FormatDuration(now - promotion_waiting_since_),
                                          " (last for: ", promotion_waited_for_, ")")));
    }
    if (waiting_for.empty()) {
      promotion_waiting_since_ = absl::InfinitePast();
      promotion_waited_for_.clear();
    } else {
      if (promotion_waiting_since_ == absl::InfinitePast()) promotion_waiting_since_ = now;
      promotion_waited_for_ = waiting_for;
    }
    result.served_new = !served->empty();
    if (result.served_new) {
      // The follower republishes them to every member before the rest (fills, transaction recovery,
      // one ZooKeeper write per filled region): readers wait for that, not for this.
      result.waiting = true;
      return result;
    }
  }
  // While a promotion waits (for the members' CONFIG-APPLIED, for pending commits), it is asked again
  // every few milliseconds: the fills and the backup copies wait for it, since they take the follower
  // hundreds of milliseconds (~35 ms per 64 MiB copy made; seen: 460 ms) and the region is unavailable
  // until it is served. Transaction recovery runs: a promotion may wait for its decisions.
  const bool promoting = !txns->promotions_waiting().empty();
  if (!promoting) {
    absl::StatusOr<std::vector<txn::TransactionService::Filled>> filled = txns->FillBackups();
    if (!filled.ok()) {
      log_waiting(absl::StrCat("cannot fill a new backup yet: ", filled.status().ToString()));
    } else {
      std::vector<std::pair<uint32_t, uint32_t>> copies;
      for (const auto& [region, backup] : *filled) copies.emplace_back(region, backup);
      if (!copies.empty()) {
        absl::StatusOr<coordinator::Configuration> marked =
            coordinator_->Update(coordinator::FinishFillingUpdate(id_, copies));
        for (const auto& [region, backup] : copies) {
          Log(absl::StrCat("copied region ", region, " to its new backup, node ", backup, ": ",
                           marked.ok() ? absl::StrCat("done in configuration ", marked->epoch())
                                       : marked.status().ToString()));
        }
      }
    }
  }
  absl::StatusOr<txn::TransactionService::OrphanProgress> orphans = txns->RecoverOrphans();
  if (!orphans.ok()) {
    log_waiting(absl::StrCat("cannot recover the transactions of gone coordinators yet: ", orphans.status().ToString()));
  } else if (!orphans->error.empty()) {
    log_waiting(absl::StrCat("recovering the transactions of gone coordinators: ", orphans->error));
  }
  if (absl::Status prepared = promoting ? absl::OkStatus() : txns->PrepareBackupCopies(); !prepared.ok()) {
    log_waiting(absl::StrCat("cannot make the copies of the regions this node backs up: ", prepared.ToString()));
  }
  result.waiting = promoting || txns->fills_waiting() || !orphans.ok() || !orphans->settled;
  result.soon = promoting;
  return result;
}

void Server::StopLease() {
  if (lease_task_ != 0) options_.node.executor->RemoveTask(lease_task_);
  lease_task_ = 0;
  lease_->Stop();
}

std::vector<uint32_t> Server::data_members() const {
  if (txns_ == nullptr) return {};
  return txns_->replicas()->members();
}

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (node_ != nullptr) node_->SetTableCalls(nullptr);  // no table call may outlive the catalog and txns
  if (node_ != nullptr) node_->SetReplicaDigestSource(nullptr);
  if (coordinator_ != nullptr) coordinator_->SetFailureWitness(nullptr);  // the lease agent may go first
  // A data member stops its lease before the follower: a removal now is the shutdown's, not a lease's. A
  // client-only member (never the CM, no regions) keeps renewing until it has left: a slow shutdown
  // (the follower finishing a pass) let its lease expire first, and the CM removed it as failed.
  if (lease_ != nullptr && !options_.client_only) StopLease();
  PauseMembership();
  txn_subscription_.reset();
  placement_subscription_.reset();
  listed_subscription_.reset();
  if (coordinator_ != nullptr && joined_) coordinator_->Leave().IgnoreError();
  if (lease_ != nullptr) StopLease();  // idempotent
  if (node_ != nullptr) node_->Stop();  // before the transaction layer goes: the node's threads use it
  if (log_ != nullptr) log_->Stop();    // writes what is queued
}

}  // namespace fathom::server
