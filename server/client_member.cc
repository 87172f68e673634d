// See client_member.h.
#include "server/client_member.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "platform/base/status_macros.h"
#include "platform/node/control/control_client.h"
#include "server/table_client.h"

namespace fathom::server {
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

// What this node must share with the members: as many node threads, and the same f.
struct Shape {
  int threads = 0;
  int backups = 0;
};

// A member's Stats, through its control address.
absl::StatusOr<control::StatsResponse> StatsOf(const coordinator::MemberInfo& member, const ClientMemberOptions& options) {
  control::ControlClientOptions client_options;
  client_options.target = member.control_address();
  client_options.cluster_token = options.token;
  client_options.tls_ca_path = options.tls_ca_path;
  client_options.call_timeout = absl::Seconds(5);
  auto client = control::ControlClient::Create(client_options);
  if (!client.ok()) return client.status();
  return (*client)->Stats();
}

// From a data member's Stats (fathomd reports node.threads and txn.backups).
absl::StatusOr<Shape> MembersShape(const coordinator::Configuration& config, const ClientMemberOptions& options) {
  absl::Status last = absl::UnavailableError("no data member");
  for (const coordinator::MemberInfo& member : config.members()) {
    if (member.client_only()) continue;
    auto stats = StatsOf(member, options);
    if (!stats.ok()) {
      last = stats.status();
      continue;
    }
    const auto& counters = stats->counters();
    auto threads = counters.find("node.threads");
    auto backups = counters.find("txn.backups");
    if (threads == counters.end() || backups == counters.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "node ", member.node_id(), " does not report node.threads and txn.backups (a fathomd older than this client?)"));
    }
    if (threads->second == 0 || threads->second > 256 || backups->second > 16) {
      return absl::FailedPreconditionError(absl::StrCat("node ", member.node_id(), " reports ", threads->second,
                                                        " threads and ", backups->second, " backups: out of range"));
    }
    return Shape{static_cast<int>(threads->second), static_cast<int>(backups->second)};
  }
  return absl::UnavailableError(absl::StrCat("no member answered for its thread count and backups: ", last.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClientMember>> ClientMember::Join(ClientMemberOptions options) {
  if (options.zookeeper.empty()) return absl::InvalidArgumentError("joining a cluster needs ZooKeeper (host:port)");
  if (options.threads < 0) return absl::InvalidArgumentError("a negative thread count");
  if (options.busy_poll < absl::ZeroDuration() || options.busy_poll > absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("busy_poll ", absl::FormatDuration(options.busy_poll), " is not between 0 and 1s"));
  }
  // The members call this node's control service back: with TLS it needs the CA and a certificate of its own.
  if (options.tls_ca_path.empty() != options.tls.certificate_path.empty() ||
      options.tls.certificate_path.empty() != options.tls.private_key_path.empty()) {
    return absl::InvalidArgumentError("TLS needs the CA, a certificate and its key (--tls_ca, --tls_cert, "
                                      "--tls_key), all three or none");
  }
  if (options.node_id > coordinator::kMaxNodeId) {
    return absl::InvalidArgumentError(absl::StrCat("node id ", options.node_id, " is over ", coordinator::kMaxNodeId));
  }
  std::unique_ptr<ClientMember> client(new ClientMember(std::move(options)));
  if (absl::Status started = client->Start(); !started.ok()) {
    client->Leave();
    return started;
  }
  return client;
}

absl::Status ClientMember::Start() {
  // A ZooKeeper client of its own first, to read the configuration: the node id and the members' shape
  // must be known before the node starts.
  coordinator::ZooKeeperCoordinatorOptions zk;
  zk.connect_string = options_.zookeeper;
  zk.cluster = options_.cluster;
  zk.token = options_.token;
  zk.connect_timeout = options_.join_timeout;
  zk.join_timeout = options_.join_timeout;
  // As fathomd's: its session outlives a ZooKeeper outage the members' leases ride through (its lease is
  // what removes it when it dies).
  zk.session_timeout = options_.zookeeper_session_timeout;
  auto created = coordinator::ZooKeeperCoordinator::Create(zk);
  if (!created.ok()) return created.status();
  coordinator_ = std::move(*created);
  auto config = coordinator_->GetConfiguration();
  if (!config.ok() || coordinator::DataMemberIds(*config).empty()) {
    return absl::UnavailableError(absl::StrCat("no running cluster '", options_.cluster, "' at ZooKeeper ",
                                               options_.zookeeper, ": ",
                                               config.ok() ? "no member holds data" : config.status().ToString()));
  }
  id_ = options_.node_id != 0 ? options_.node_id : FreeNodeId(*config);
  auto shape = MembersShape(*config, options_);
  if (!shape.ok()) return shape.status();
  if (options_.threads == 0) options_.threads = shape->threads;

  ServerOptions server;
  server.node.node_id = id_;
  server.node.cluster_name = options_.cluster;
  server.node.cluster_token = options_.token;
  server.node.listen_address = options_.listen;
  server.node.tls = options_.tls;
  server.node.tls_ca_path = options_.tls_ca_path;
  server.node.memory_bytes = kClientMemoryBytes;
  server.node.region_bytes = kClientMemoryBytes;
  server.node.worker_threads = options_.threads;
  server.node.join_timeout = options_.join_timeout;
  server.node.busy_poll_window = options_.busy_poll;
  server.transports = options_.tcp ? "tcp" : "sm";
  server.coordinator = coordinator_.get();
  server.lease_period = options_.lease_period;
  server.client_only = true;
  server.transactions.backups = shape->backups;  // its commits replicate like the members'
  server.transactions.on_step = options_.on_commit_step;
  auto started = Server::Start(std::move(server));
  if (!started.ok()) return started.status();
  server_ = std::move(*started);
  return absl::OkStatus();
}

void ClientMember::Leave() {
  // The server leaves the configuration and stops its node; then ZooKeeper is closed.
  server_.reset();
  if (coordinator_ != nullptr) coordinator_->Close();
}

ClientMember::~ClientMember() { Leave(); }

absl::StatusOr<kv::Table> ClientMember::OpenOrCreateTable(std::string_view name,
                                                          control::CreateTableRequest request) {
  auto opened = kv::Table::Open(transactions(), catalog(), name);
  if (!absl::IsNotFound(opened.status())) return opened;
  auto created = CreateTable(name, std::move(request));
  if (!absl::IsAlreadyExists(created.status())) return created;  // AlreadyExists: another client won the race
  return OpenWhenListed(name);
}

absl::StatusOr<kv::Table> ClientMember::CreateTable(std::string_view name, control::CreateTableRequest request) {
  // A client-only node has nowhere to put a table's root: a data member creates it.
  request.set_name(std::string(name));
  auto config = coordinator_->GetConfiguration();
  if (!config.ok()) return config.status();
  TableCallOptions call;
  call.token = options_.token;
  call.tls_ca_path = options_.tls_ca_path;
  call.timeout = std::max(options_.join_timeout, absl::Seconds(60));
  auto created = server::CreateTable(*config, request, call);
  if (!created.ok()) return created.status();
  return OpenWhenListed(name);
}

absl::Status ClientMember::DropTable(std::string_view name) {
  auto config = coordinator_->GetConfiguration();
  if (!config.ok()) return config.status();
  TableCallOptions call;
  call.token = options_.token;
  call.tls_ca_path = options_.tls_ca_path;
  return server::DropTable(*config, std::string(name), call);
}

// The member wrote the name into the configuration; this node's coordinator sees it when its watch fires.
absl::StatusOr<kv::Table> ClientMember::OpenWhenListed(std::string_view name) {
  const absl::Time deadline = absl::Now() + options_.join_timeout;
  while (true) {
    auto opened = kv::Table::Open(transactions(), catalog(), name);
    if (!absl::IsNotFound(opened.status()) || absl::Now() > deadline) return opened;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

absl::StatusOr<std::vector<control::StatsResponse>> ClientMember::DataMemberStats() {
  if (server_ == nullptr || server_->coordinator() == nullptr) return absl::FailedPreconditionError("not joined");
  ASSIGN_OR_RETURN(coordinator::Configuration config, server_->coordinator()->GetConfiguration());
  std::vector<control::StatsResponse> all;
  for (const coordinator::MemberInfo& member : config.members()) {
    if (member.client_only()) continue;
    auto stats = StatsOf(member, options_);
    if (!stats.ok()) {
      return absl::UnavailableError(
          absl::StrCat("node ", member.node_id(), " did not answer for its Stats: ", stats.status().message()));
    }
    all.push_back(std::move(*stats));
  }
  return all;
}

}  // namespace fathom::server
