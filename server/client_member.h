// ClientMember: this process joins a running cluster (members on ZooKeeper) as a client-only member: a
// Server that holds no data, coordinates its own transactions, reads one-sided, and opens the cluster's
// tables by name (a data member creates them). fathom::Client (fathom/client.h) is built on it, and the
// YCSB driver through that.
//
//   ClientMemberOptions options{.zookeeper = "127.0.0.1:2181", .cluster = "prod", .token = token};
//   ASSIGN_OR_RETURN(std::unique_ptr<ClientMember> client, ClientMember::Join(options));
//   control::CreateTableRequest request;
//   request.set_buckets(4096);
//   ASSIGN_OR_RETURN(kv::Table users, client->OpenOrCreateTable("users", request));
//   client->Leave();                                  // or destroy it
//
// Its node id is the highest one no member has (or options.node_id), its thread count and f are the
// members' (a data member's Stats: node.threads, txn.backups). Join returns once it is connected to every
// data member. Unavailable when ZooKeeper or the cluster cannot be reached (no configuration, no data
// member); DeadlineExceeded when the members were not all connected within join_timeout.
#ifndef FATHOM_SERVER_CLIENT_MEMBER_H_
#define FATHOM_SERVER_CLIENT_MEMBER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/zookeeper_coordinator.h"
#include "kv/kv.h"
#include "server/server.h"

namespace fathom::server {

struct ClientMemberOptions {
  std::string zookeeper;           // the cluster's --zk
  std::string cluster = "fathom";  // its --cluster
  std::string token;               // its cluster token
  bool tcp = false;                // UCX tcp instead of shared memory: the cluster's --transports
  int threads = 0;                 // node threads, as the members' (fathomd --threads); 0: ask a member
  uint32_t node_id = 0;            // 0: the highest id no member has
  std::string listen = "127.0.0.1:0";
  // The members' control services use TLS: the CA their certificates chain to. The members then call this
  // node's control service with TLS too (to join it), so it serves `tls`, a certificate that CA signed.
  std::string tls_ca_path;
  control::ServerTlsFiles tls;
  absl::Duration lease_period = absl::Seconds(2);
  absl::Duration zookeeper_session_timeout = absl::Seconds(20);  // fathomd's default
  absl::Duration join_timeout = absl::Seconds(30);
  // How long a node thread keeps polling after its last work before it sleeps (fathomd --busy_poll):
  // shorter waits for replies when this process has a core to spare. 0 to 1 s; 0: sleep at once.
  absl::Duration busy_poll = absl::ZeroDuration();
  // Tests only: txn::TxnOptions::on_step of its transactions (fault points at the commit's steps).
  std::function<void(std::string_view step)> on_commit_step;
};

class ClientMember {
 public:
  static absl::StatusOr<std::unique_ptr<ClientMember>> Join(ClientMemberOptions options);
  ~ClientMember();  // Leave()

  // Leaves the configuration and stops the node. Idempotent. REQUIRES: no table handle is in use.
  void Leave();

  Server& server() { return *server_; }
  txn::TransactionService& transactions() { return server_->transactions(); }
  kv::Catalog& catalog() { return *server_->catalog(); }
  uint32_t id() const { return id_; }
  int threads() const { return options_.threads; }
  const ClientMemberOptions& options() const { return options_; }

  // Opens table `name`; when there is none, has a data member create it as `request` says (its name is
  // set here; another client creating it at the same time is fine: both open the one made) and waits
  // until its name reaches this node's view of the configuration.
  absl::StatusOr<kv::Table> OpenOrCreateTable(std::string_view name, control::CreateTableRequest request);
  // Creates table `name` through a data member (AlreadyExists if there is one) and opens it.
  absl::StatusOr<kv::Table> CreateTable(std::string_view name, control::CreateTableRequest request);
  // Drops table `name` through a data member.
  absl::Status DropTable(std::string_view name);
  // Every data member's Stats (what fathomctl status shows), asked through its control address, in the
  // configuration's order. Unavailable naming the first member that did not answer.
  absl::StatusOr<std::vector<control::StatsResponse>> DataMemberStats();

 private:
  explicit ClientMember(ClientMemberOptions options) : options_(std::move(options)) {}
  absl::Status Start();
  absl::StatusOr<kv::Table> OpenWhenListed(std::string_view name);

  ClientMemberOptions options_;
  uint32_t id_ = 0;
  std::unique_ptr<coordinator::ZooKeeperCoordinator> coordinator_;  // outlives the server
  std::unique_ptr<Server> server_;
};

}  // namespace fathom::server

#endif  // FATHOM_SERVER_CLIENT_MEMBER_H_
