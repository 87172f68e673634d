// See fathom_remote.h.
#include "bench/ycsb/fathom_remote.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "platform/fabric/ucx/ucx_fabric.h"
#include "platform/node/control/control_client.h"
#include "server/table_client.h"

namespace fathom::ycsb {
namespace {

// The client holds no data, but a node needs one region of its own; rings are allocated apart.
constexpr uint64_t kClientMemoryBytes = 4 << 20;

// The highest node id no member has (data members count up from 1, so this stays clear of them).
uint32_t FreeNodeId(const coordinator::Configuration& config) {
  for (uint32_t id = coordinator::kMaxNodeId; id > 0; --id) {
    if (coordinator::FindMember(config, id) == nullptr) return id;
  }
  return 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RemoteFathom>> RemoteFathom::Join(const RemoteFathomOptions& options) {
  if (options.zk.empty()) return absl::InvalidArgumentError("joining a cluster needs --zk=HOST:PORT");
  if (options.threads < 0) return absl::InvalidArgumentError("a negative thread count");
  if (options.node_id > coordinator::kMaxNodeId) {
    return absl::InvalidArgumentError(absl::StrCat("node id ", options.node_id, " is over ", coordinator::kMaxNodeId));
  }
  std::unique_ptr<RemoteFathom> remote(new RemoteFathom());
  remote->options_ = options;
  if (absl::Status started = remote->Start(); !started.ok()) {
    remote->Leave().IgnoreError();
    return started;
  }
  return remote;
}

absl::Status RemoteFathom::Start() {
  coordinator::ZooKeeperCoordinatorOptions zk;
  zk.connect_string = options_.zk;
  zk.cluster = options_.cluster;
  zk.connect_timeout = options_.join_timeout;
  zk.join_timeout = options_.join_timeout;
  auto created = coordinator::ZooKeeperCoordinator::Create(zk);
  if (!created.ok()) return created.status();
  coordinator_ = std::move(*created);
  auto config = coordinator_->GetConfiguration();
  if (!config.ok() || coordinator::DataMemberIds(*config).empty()) {
    return absl::UnavailableError(absl::StrCat("no running cluster '", options_.cluster, "' at ZooKeeper ",
                                               options_.zk, ": ",
                                               config.ok() ? "no member holds data" : config.status().ToString()));
  }
  const uint32_t id = options_.node_id != 0 ? options_.node_id : FreeNodeId(*config);
  // The members' shape: their thread count (a node runs as many as its peers) and f, which this node's
  // commits must replicate to like theirs.
  auto shape = MembersShape(*config);
  if (!shape.ok()) return shape.status();
  if (options_.threads == 0) options_.threads = shape->threads;

  node::NodeOptions node_options;
  node_options.node_id = id;
  node_options.cluster_name = options_.cluster;
  node_options.cluster_token = options_.token;
  node_options.listen_address = options_.listen;
  node_options.memory_bytes = kClientMemoryBytes;
  node_options.region_bytes = kClientMemoryBytes;
  node_options.worker_threads = options_.threads;
  node_options.join_timeout = options_.join_timeout;
  if (options_.lease_period > absl::ZeroDuration()) {
    coordinator::LeaseOptions lease_options;
    lease_options.period = options_.lease_period;
    lease_ = std::make_unique<coordinator::LeaseAgent>(lease_options);
    lease_->InstallHandler(&node_options);
  }
  fabric::UcxOptions ucx;
  ucx.transports = options_.tcp ? "tcp" : "sm";
  auto fabric = fabric::CreateUcxFabric(ucx);
  if (!fabric.ok()) return fabric.status();
  auto node = node::Node::Start(node_options, std::move(*fabric));
  if (!node.ok()) return node.status();
  node_ = std::move(*node);
  // The transaction layer before any member connects: records and replies may come at once.
  txn::TxnOptions txn_options;
  txn_options.backups = shape->backups;
  auto txns = txn::TransactionService::Attach(node_.get(), txn_options);
  if (!txns.ok()) return txns.status();
  txns_ = std::move(*txns);
  txn::TransactionService* service = txns_.get();
  std::atomic<uint64_t>* listed = &listed_epoch_;
  txn_subscription_ = coordinator_->Subscribe([service, listed, id](const coordinator::Configuration& configuration) {
    service->SetConfiguration(configuration.epoch(), coordinator::DataMemberIds(configuration));
    if (coordinator::FindMember(configuration, id) != nullptr) listed->store(configuration.epoch());
  });

  coordinator::MemberInfo me = coordinator::MemberInfoFor(
      *node_, 0, options_.tcp ? coordinator::FABRIC_KIND_UCX_TCP : coordinator::FABRIC_KIND_UCX_SHARED_MEMORY);
  me.set_client_only(true);
  if (absl::Status joined = coordinator_->Join(me); !joined.ok()) {
    return absl::Status(joined.code(), absl::StrCat("joining cluster '", options_.cluster, "' as client-only node ",
                                                    id, ": ", joined.message()));
  }
  // Subscribers hear configurations on their own thread, after Join has seen them: a follower started
  // now could be handed an older one without this node first, take it for a removal, and leave and join
  // again (one needless configuration change each way). So wait until subscribers have heard of us.
  const absl::Time deadline = absl::Now() + options_.join_timeout;
  while (listed_epoch_.load() == 0) {
    if (absl::Now() > deadline) return absl::DeadlineExceededError("no configuration listing this client arrived");
    absl::SleepFor(absl::Milliseconds(5));
  }
  coordinator::MembershipOptions membership;
  if (lease_ != nullptr) {
    if (absl::Status s = lease_->Start(node_.get(), coordinator_.get()); !s.ok()) return s;
    membership.lease = lease_.get();
    membership.rejoin_as = me;
  }
  auto follower = coordinator::MembershipFollower::Start(node_.get(), coordinator_.get(), std::move(membership));
  if (!follower.ok()) return follower.status();
  follower_ = std::move(*follower);
  if (absl::Status s = WaitForMembers(); !s.ok()) return s;

  catalog_ = std::make_unique<kv::CoordinatorCatalog>(coordinator_.get());
  auto table = OpenOrCreateTable();
  if (!table.ok()) return table.status();
  tables_.push_back(std::move(*table));
  for (int t = 0; t < options_.threads; ++t) {
    auto thread = TxnThreadOf(*txns_, t);
    if (!thread.ok()) return thread.status();
    lanes_.push_back(std::make_unique<FathomAsyncBackend>(
        *thread, tables_[0], options_.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(t) + 1));
  }
  return absl::OkStatus();
}

absl::StatusOr<RemoteFathom::Shape> RemoteFathom::MembersShape(const coordinator::Configuration& config) const {
  absl::Status last = absl::UnavailableError("no data member");
  for (const coordinator::MemberInfo& member : config.members()) {
    if (member.client_only()) continue;
    control::ControlClientOptions client_options;
    client_options.target = member.control_address();
    client_options.cluster_token = options_.token;
    client_options.call_timeout = absl::Seconds(5);
    auto client = control::ControlClient::Create(client_options);
    auto stats = client.ok() ? (*client)->Stats() : client.status();
    if (!stats.ok()) {
      last = stats.status();
      continue;
    }
    const auto& counters = stats->counters();
    auto threads = counters.find("node.threads");
    auto backups = counters.find("txn.backups");
    if (threads == counters.end() || backups == counters.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "node ", member.node_id(), " does not report node.threads and txn.backups (a fathomd older than this driver?)"));
    }
    if (threads->second == 0 || threads->second > 256 || backups->second > 16) {
      return absl::FailedPreconditionError(absl::StrCat("node ", member.node_id(), " reports ", threads->second,
                                                        " threads and ", backups->second, " backups: out of range"));
    }
    return Shape{static_cast<int>(threads->second), static_cast<int>(backups->second)};
  }
  return absl::UnavailableError(absl::StrCat("no member answered for its thread count and backups: ", last.message()));
}

// Until this node is connected to every data member of the configuration it applied (so its first
// transaction finds every primary and backup) and the transaction layer has that configuration.
absl::Status RemoteFathom::WaitForMembers() {
  const absl::Time deadline = absl::Now() + options_.join_timeout;
  std::vector<uint32_t> missing;
  while (true) {
    auto config = coordinator_->GetConfiguration();
    if (config.ok() && follower_->applied_epoch() >= config->epoch() &&
        txns_->replicas()->epoch() >= config->epoch()) {
      const std::vector<uint32_t> connected = node_->connected_peers();
      data_members_ = coordinator::DataMemberIds(*config);
      missing.clear();
      for (uint32_t member : data_members_) {
        if (std::find(connected.begin(), connected.end(), member) == connected.end()) missing.push_back(member);
      }
      if (missing.empty() && !data_members_.empty()) return absl::OkStatus();
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "client node ", node_->id(), " is not connected to members [", absl::StrJoin(missing, ","), "] after ",
          absl::FormatDuration(options_.join_timeout),
          " (every node of a cluster runs the same number of threads: this one runs ", options_.threads, ")"));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

absl::StatusOr<kv::Table> RemoteFathom::OpenOrCreateTable() {
  auto opened = kv::Table::Open(*txns_, *catalog_, options_.table);
  if (!absl::IsNotFound(opened.status())) return opened;
  // A client-only node has nowhere to put a table's root: a data member creates it (kv sizing as the
  // embedded cluster's: 8 keys per bucket, filled to about half).
  control::CreateTableRequest request;
  request.set_name(options_.table);
  request.set_buckets(std::max<uint64_t>(64, std::max<uint64_t>(options_.records, 1000) / 4));
  auto config = coordinator_->GetConfiguration();
  if (!config.ok()) return config.status();
  server::TableCallOptions call;
  call.token = options_.token;
  call.timeout = std::max(options_.join_timeout, absl::Seconds(60));
  auto created = server::CreateTable(*config, request, call);
  if (created.ok()) {
    std::fprintf(stderr, "created table %s (%llu buckets) through the cluster\n", options_.table.c_str(),
                 static_cast<unsigned long long>(created->buckets()));
  } else if (!absl::IsAlreadyExists(created.status())) {  // another driver won the race: use its table
    return created.status();
  }
  // The member wrote the name into the configuration; this node's coordinator sees it when its watch fires.
  const absl::Time deadline = absl::Now() + options_.join_timeout;
  while (true) {
    opened = kv::Table::Open(*txns_, *catalog_, options_.table);
    if (!absl::IsNotFound(opened.status()) || absl::Now() > deadline) return opened;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

absl::Status RemoteFathom::Leave() {
  if (left_) return absl::OkStatus();
  left_ = true;
  // As fathomd stops: the lease first (a removal now is the leave's), then the follower (or it would
  // join again), then the configuration, then the node (its threads use the transaction layer).
  if (lease_ != nullptr) lease_->Stop();
  follower_.reset();
  txn_subscription_.reset();
  absl::Status left = absl::OkStatus();
  if (coordinator_ != nullptr && node_ != nullptr) left = coordinator_->Leave();
  if (node_ != nullptr) node_->Stop();
  lanes_.clear();
  tables_.clear();
  txns_.reset();
  catalog_.reset();
  if (coordinator_ != nullptr) coordinator_->Close();
  return left;
}

RemoteFathom::~RemoteFathom() { Leave().IgnoreError(); }

absl::Status RemoteFathom::Post(int lane, std::function<void()> task) {
  if (lane < 0 || lane >= lanes()) return absl::InvalidArgumentError(absl::StrCat("no lane ", lane));
  return txns_->Post(lane, [task = std::move(task)](txn::TxnThread&) { task(); });
}

std::unique_ptr<Backend> RemoteFathom::NewBackend() { return std::make_unique<FathomBackend>(txns_.get(), tables_[0]); }

std::string RemoteFathom::Describe() const {
  return absl::StrCat("client-only node ", node_->id(), " (", options_.threads, " threads over UCX ",
                      options_.tcp ? "tcp" : "shared memory", ") of cluster '", options_.cluster, "' at ",
                      options_.zk, ", data members [", absl::StrJoin(data_members_, ","), "], table ",
                      options_.table, " of ", tables_.empty() ? 0 : tables_[0].buckets(), " buckets");
}

}  // namespace fathom::ycsb
