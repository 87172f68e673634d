// fathom-resp: a Redis-protocol (RESP2) gateway to a Fathom cluster, so redis-cli, redis-benchmark and
// Redis client libraries work against Fathom unchanged (docs/formats/resp.md).
//
//   fathom-resp --zk=127.0.0.1:2181 --cluster=local --token_file=DIR/token [--port=6380] [--table=redis]
//               [--require_auth] [--tcp] [--host=127.0.0.1]
//   fathom-resp --cluster_file=DIR/cluster ...       (what tools/cluster.sh wrote)
//   redis-cli -p 6380 SET greeting hello
//
// It joins the cluster as a client-only member (fathom::Client), opens --table (creating it with
// --buckets if there is none), prints "READY resp=<host:port> table=<name>" on stdout, and serves
// until SIGTERM or SIGINT. Commands: GET SET DEL EXISTS MGET MSET INCR DECR INCRBY DECRBY PING ECHO INFO
// MULTI EXEC DISCARD WATCH UNWATCH AUTH SELECT QUIT (and the CONFIG GET, COMMAND and CLIENT SETNAME that
// tools send on their own). MSET, MGET, INCR and EXEC are atomic Fathom transactions. With
// --require_auth, clients must AUTH with the cluster token first. Exit codes: 0 clean stop, 1 the cluster
// or the port could not be reached, 2 bad flags.
#include <signal.h>

#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fathom/client.h"
#include "fathom/cluster_file_flags.h"
#include "platform/base/log.h"
#include "platform/node/control/cluster_token.h"
#include "platform/node/control/host_port.h"
#include "resp/gateway_server.h"
#include "resp/session.h"

ABSL_FLAG(std::string, zk, "127.0.0.1:2181", "ZooKeeper connect string host:port[,host:port] (the nodes' --zk)");
ABSL_FLAG(std::string, cluster, "fathom", "cluster name (the nodes' --cluster)");
ABSL_FLAG(std::string, cluster_file, "",
          "a cluster file (tools/cluster.sh writes DIR/cluster): --zk, --cluster, --token_file and --tcp from it, "
          "unless given");
ABSL_FLAG(std::string, token, "", "cluster token (prefer --token_file: flags are visible to other users)");
ABSL_FLAG(std::string, token_file, "", "file holding the cluster token");
ABSL_FLAG(bool, tcp, false, "join over UCX tcp (the members run --transports=tcp)");
ABSL_FLAG(std::string, tls_ca, "",
          "the members' control services use TLS: the CA certificate (PEM) their certificates chain to");
ABSL_FLAG(std::string, tls_cert, "",
          "with --tls_ca: a certificate (PEM) that CA signed, for the gateway's own control service");
ABSL_FLAG(std::string, tls_key, "", "with --tls_ca: --tls_cert's private key (PEM)");
ABSL_FLAG(std::string, host, "127.0.0.1", "address to listen on (0.0.0.0 or :: for every interface)");
ABSL_FLAG(int, port, 6380, "port to listen on (0: a free one, printed in the READY line)");
ABSL_FLAG(std::string, table, "redis", "the Fathom table that holds the keys (created if missing)");
ABSL_FLAG(uint64_t, buckets, 65536, "buckets of the table if it is created (8 keys each; it grows when full)");
ABSL_FLAG(bool, require_auth, false, "clients must AUTH with the cluster token before any other command");
ABSL_FLAG(int, max_clients, 1000, "connections served at once; more are told so and closed");

namespace fathom::resp {
namespace {

void Log(const std::string& message, LogLevel level = LogLevel::kInfo) { LogLine(level, "fathom-resp", message); }

int Run() {
  absl::StatusOr<std::string> token = control::TokenFromFlags(
      absl::GetFlag(FLAGS_token), absl::GetFlag(FLAGS_token_file), "a cluster token is required (--token_file)");
  if (!token.ok()) {
    std::cerr << "fathom-resp: " << token.status().message() << std::endl;
    return 2;
  }
  if (absl::GetFlag(FLAGS_max_clients) < 1) {
    std::cerr << "fathom-resp: --max_clients must be at least 1" << std::endl;
    return 2;
  }
  ClientOptions client_options;
  client_options.zookeeper = absl::GetFlag(FLAGS_zk);
  client_options.cluster = absl::GetFlag(FLAGS_cluster);
  client_options.token = *token;
  client_options.tcp = absl::GetFlag(FLAGS_tcp);
  client_options.tls_ca_file = absl::GetFlag(FLAGS_tls_ca);
  client_options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  client_options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(client_options);
  if (!client.ok()) {
    Log(absl::StrCat("cannot join cluster '", client_options.cluster, "' at ", client_options.zookeeper, ": ",
                     client.status().ToString()), LogLevel::kError);
    return absl::IsInvalidArgument(client.status()) ? 2 : 1;
  }
  TableOptions table_options;
  table_options.buckets = absl::GetFlag(FLAGS_buckets);
  absl::StatusOr<Table> table = (*client)->OpenOrCreateTable(absl::GetFlag(FLAGS_table), table_options);
  if (!table.ok()) {
    Log(absl::StrCat("cannot open table '", absl::GetFlag(FLAGS_table), "': ", table.status().ToString()),
        LogLevel::kError);
    return absl::IsInvalidArgument(table.status()) ? 2 : 1;
  }
  GatewayStats stats;
  SessionContext context;
  context.client = client->get();
  context.table = &*table;
  if (absl::GetFlag(FLAGS_require_auth)) context.password = *token;
  context.stats = &stats;
  KeyLocks key_locks;
  context.key_locks = &key_locks;
  GatewayOptions options;
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  options.max_clients = static_cast<size_t>(absl::GetFlag(FLAGS_max_clients));
  absl::StatusOr<std::unique_ptr<GatewayServer>> server = GatewayServer::Start(options, context);
  if (!server.ok()) {
    Log(server.status().ToString(), LogLevel::kError);
    return absl::IsInvalidArgument(server.status()) ? 2 : 1;
  }
  std::cout << "READY resp=" << control::JoinHostPort(options.host, (*server)->port()) << " table=" << table->name()
            << std::endl;

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  int signal = 0;
  sigwait(&signals, &signal);
  Log(absl::StrCat("stopping (", signal == SIGTERM ? "SIGTERM" : "SIGINT", "); served ", stats.connections.load(),
                   " connections, ", stats.commands.load(), " commands"));
  (*server)->Stop();
  return 0;
}

}  // namespace
}  // namespace fathom::resp

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("fathom-resp: a Redis-protocol gateway to a Fathom cluster. See resp/fathom_resp_main.cc.");
  absl::ParseCommandLine(argc, argv);
  if (absl::Status s = fathom::FillFlagsFromClusterFile(absl::GetFlag(FLAGS_cluster_file), {}); !s.ok()) {
    std::cerr << "fathom-resp: " << s.message() << std::endl;
    return 2;
  }
  // Blocked before any thread starts, so only Run's sigwait sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return fathom::resp::Run();
}
