// See fathom_remote.h.
#include "bench/ycsb/fathom_remote.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
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
  // A ZooKeeper client of its own first, to read the configuration: the node id and the members' shape
  // must be known before the client-only member starts.
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

  server::ServerOptions server;
  server.node.node_id = id;
  server.node.cluster_name = options_.cluster;
  server.node.cluster_token = options_.token;
  server.node.listen_address = options_.listen;
  server.node.memory_bytes = kClientMemoryBytes;
  server.node.region_bytes = kClientMemoryBytes;
  server.node.worker_threads = options_.threads;
  server.node.join_timeout = options_.join_timeout;
  server.transports = options_.tcp ? "tcp" : "sm";
  server.coordinator = coordinator_.get();
  server.lease_period = options_.lease_period;
  server.client_only = true;
  server.transactions.backups = shape->backups;
  auto started = server::Server::Start(std::move(server));
  if (!started.ok()) return started.status();
  server_ = std::move(*started);
  id_ = id;
  data_members_ = server_->data_members();

  auto table = OpenOrCreateTable();
  if (!table.ok()) return table.status();
  tables_.push_back(std::move(*table));
  for (int t = 0; t < options_.threads; ++t) {
    auto thread = TxnThreadOf(server_->transactions(), t);
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

absl::StatusOr<kv::Table> RemoteFathom::OpenOrCreateTable() {
  auto opened = kv::Table::Open(server_->transactions(), *server_->catalog(), options_.table);
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
    opened = kv::Table::Open(server_->transactions(), *server_->catalog(), options_.table);
    if (!absl::IsNotFound(opened.status()) || absl::Now() > deadline) return opened;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

absl::Status RemoteFathom::Leave() {
  if (left_) return absl::OkStatus();
  left_ = true;
  // The server leaves the configuration and stops its node; the handles on its transaction layer go after.
  if (server_ != nullptr) server_->Stop();
  lanes_.clear();
  tables_.clear();
  server_.reset();
  if (coordinator_ != nullptr) coordinator_->Close();
  return absl::OkStatus();
}

RemoteFathom::~RemoteFathom() { Leave().IgnoreError(); }

absl::Status RemoteFathom::Post(int lane, std::function<void()> task) {
  if (lane < 0 || lane >= lanes()) return absl::InvalidArgumentError(absl::StrCat("no lane ", lane));
  return server_->transactions().Post(lane, [task = std::move(task)](txn::TxnThread&) { task(); });
}

std::unique_ptr<Backend> RemoteFathom::NewBackend() { return std::make_unique<FathomBackend>(&server_->transactions(), tables_[0]); }

std::string RemoteFathom::Describe() const {
  return absl::StrCat("client-only node ", node_id(), " (", options_.threads, " threads over UCX ",
                      options_.tcp ? "tcp" : "shared memory", ") of cluster '", options_.cluster, "' at ",
                      options_.zk, ", data members [", absl::StrJoin(data_members_, ","), "], table ",
                      options_.table, " of ", tables_.empty() ? 0 : tables_[0].buckets(), " buckets");
}

}  // namespace fathom::ycsb
