// fathomctl: looks at a Fathom cluster — its configuration in ZooKeeper and its members' live Stats.
//
//   fathomctl status  --zk=127.0.0.1:2181 --cluster=prod --token_file=/etc/fathom/token [--json]
//   fathomctl regions --zk=127.0.0.1:2181 --cluster=prod --token_file=/etc/fathom/token [--json]
//   fathomctl replicas --zk=127.0.0.1:2181 --cluster=prod --token_file=/etc/fathom/token [--wait=30s]
//   fathomctl table create NAME [--kind=hopscotch|cuckoo] [--buckets=N] [--inline_bytes=N]
//                               [--max_key_bytes=N] [--max_value_bytes=N]   --zk=... --cluster=... --token_file=...
//   fathomctl table drop NAME   --zk=... --cluster=... --token_file=...
//   fathomctl table list        --zk=... --cluster=... --token_file=... [--json]
//   fathomctl table resize NAME [--buckets=N]   --zk=... --cluster=... --token_file=... [--json]
//   fathomctl get TABLE KEY | put TABLE KEY VALUE|- | delete TABLE KEY   --zk=... --cluster=... --token_file=...
//   fathomctl txn 'get T K; put T K V; delete T K' | txn -   --zk=... --cluster=... --token_file=...
//
// status: epoch, configuration manager, every member (control address, fabric, memory, incarnation) with
// a few live numbers from its Stats (peers connected, connected to ZooKeeper, epoch applied, uptime), the
// regions and their replicas. A member whose Stats fail is shown as unreachable, with the reason.
// regions: region id, size, primary, backups (ZooKeeper only; the token opens the cluster's znodes).
// replicas: asks every member to digest the replicas it holds and checks that each region's primary and
// backups (those not still filling) agree; asks again every second until they do or --wait has passed
// (commits settle lazily: backups apply at truncation). Exit 1 if they still differ.
// table: the cluster's kv tables, through a member's control service (server/table_client.h); buckets hold 8
// keys each. Numbers left 0 take kv's defaults (a resize: twice the current buckets). A resize rebuilds
// the table while clients go on using it and returns once the new generation is published.
// get, put, delete: one key (data_commands.h): fathomctl joins the cluster as a client-only member for the
// call (over shared memory, or UCX tcp with --tcp, as the members run). get prints the value and a newline.
// txn: gets, puts and deletes run as one transaction (txn_command.h), one output line per operation.
// Human-readable aligned columns by default; --json prints one line of JSON (shapes: report.h).
// Exit codes: 0 done (`status` with some members unreachable too), 1 the configuration could not be read
// (ZooKeeper unreachable, no such cluster, corrupt configuration), `status` reached no member at all (it
// still prints what it read), or a table call failed (unknown table, name taken, no member reachable,
// entries that do not fit a smaller table), or a data command failed (no cluster, no such table), 2 bad
// usage (including a bad table name or option), 3 get or delete of a key the table does not hold.
#include <algorithm>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "platform/node/control/cluster_token.h"
#include "platform/node/control/table_validation.h"
#include "tools/fathomctl/cluster_reader.h"
#include "tools/fathomctl/data_commands.h"
#include "fathom/cluster_file_flags.h"
#include "tools/fathomctl/member_stats.h"
#include "tools/fathomctl/progress.h"
#include "tools/fathomctl/replicas.h"
#include "tools/fathomctl/report.h"
#include "server/table_client.h"
#include "tools/fathomctl/table_report.h"
#include "tools/fathomctl/txn_command.h"

ABSL_FLAG(std::string, zk, "127.0.0.1:2181", "ZooKeeper connect string host:port[,host:port]");
ABSL_FLAG(std::string, cluster_file, "",
          "a cluster file (tools/cluster.sh writes DIR/cluster): --zk, --cluster, --token_file and --tcp from it, "
          "unless given");
ABSL_FLAG(std::string, cluster, "fathom", "cluster name (the nodes' --cluster)");
ABSL_FLAG(std::string, token, "", "cluster token (prefer --token_file: flags are visible to other users)");
ABSL_FLAG(std::string, token_file, "", "file holding the cluster token (its first line)");
ABSL_FLAG(std::string, tls_ca, "",
          "the members' control services use TLS: the CA certificate (PEM) their certificates chain to");
ABSL_FLAG(std::string, tls_cert, "",
          "get/put/delete join as a member, whose control service the members call: its certificate (PEM, "
          "signed by --tls_ca's CA)");
ABSL_FLAG(std::string, tls_key, "", "get/put/delete: --tls_cert's private key (PEM)");
ABSL_FLAG(bool, json, false, "print one line of JSON instead of aligned columns");
ABSL_FLAG(bool, stats, true, "status: ask every member for its Stats (needs the token)");
ABSL_FLAG(absl::Duration, zk_timeout, absl::Seconds(5), "how long to wait for ZooKeeper");
ABSL_FLAG(absl::Duration, rpc_timeout, absl::Seconds(3), "how long to wait for each member's Stats");
ABSL_FLAG(absl::Duration, wait, absl::Seconds(30), "replicas: how long to keep asking until the replicas agree");
ABSL_FLAG(std::string, kind, "hopscotch", "table create: index kind, hopscotch or cuckoo");
ABSL_FLAG(uint64_t, buckets, 0,
          "table create: buckets (8 keys each; 0: kv's default, 1024); table resize: the new count (0: twice)");
ABSL_FLAG(uint32_t, inline_bytes, 0, "table create: key + value up to this sit in the bucket (0: kv's default)");
ABSL_FLAG(uint32_t, max_key_bytes, 0, "table create: longest key (0: kv's default, 1024)");
ABSL_FLAG(uint32_t, max_value_bytes, 0, "table create: longest value (0: kv's default)");
ABSL_FLAG(bool, tcp, false, "get/put/delete: join over UCX tcp (the members run --transports=tcp)");
ABSL_FLAG(absl::Duration, table_timeout, absl::Seconds(120),
          "table: how long a member may take (a create writes every bucket)");

namespace fathom::fathomctl {
namespace {

constexpr char kUsage[] =
    "fathomctl: look at a Fathom cluster, and read or write its keys.\n"
    "  fathomctl status  --zk=HOST:PORT --cluster=NAME --token_file=FILE [--json] [--stats=false]\n"
    "  fathomctl regions --zk=HOST:PORT --cluster=NAME --token_file=FILE [--json]\n"
    "  fathomctl replicas --zk=HOST:PORT --cluster=NAME --token_file=FILE [--wait=30s]\n"
    "  fathomctl table create NAME [--kind=hopscotch|cuckoo] [--buckets=N] [--inline_bytes=N]\n"
    "                              [--max_key_bytes=N] [--max_value_bytes=N] --zk=... --cluster=... --token_file=FILE\n"
    "  fathomctl table drop NAME --zk=... --cluster=... --token_file=FILE\n"
    "  fathomctl table list --zk=... --cluster=... --token_file=FILE [--json]\n"
    "  fathomctl table resize NAME [--buckets=N] --zk=... --cluster=... --token_file=FILE [--json]\n"
    "  fathomctl get TABLE KEY --zk=... --cluster=... --token_file=FILE [--json] [--tcp]\n"
    "  fathomctl put TABLE KEY VALUE|- --zk=... --cluster=... --token_file=FILE [--json] [--tcp]\n"
    "  fathomctl delete TABLE KEY --zk=... --cluster=... --token_file=FILE [--json] [--tcp]\n"
    "  fathomctl txn 'get T K; put T K V; delete T K' | txn - --zk=... --cluster=... --token_file=FILE [--json]\n"
    "More: fathomctl --help, and the header of tools/fathomctl/fathomctl.cc.";

int Usage(const std::string& message) {
  std::cerr << "fathomctl: " << message << "\n" << kUsage << std::endl;
  return 2;
}

absl::StatusOr<std::string> ReadToken(std::string_view missing_message) {
  return control::TokenFromFlags(absl::GetFlag(FLAGS_token), absl::GetFlag(FLAGS_token_file), missing_message);
}

ClusterReadOptions ReadOptions() {
  ClusterReadOptions options;
  options.connect_string = absl::GetFlag(FLAGS_zk);
  options.cluster = absl::GetFlag(FLAGS_cluster);
  options.connect_timeout = absl::GetFlag(FLAGS_zk_timeout);
  // The cluster's znodes are open to its token's credentials only; a read without them says so.
  if (auto token = ReadToken(""); token.ok()) options.token = *token;
  return options;
}

int Failed(const std::string& what, const absl::Status& status) {
  std::cerr << "fathomctl: " << what << ": " << status.ToString() << std::endl;
  return 1;
}

// fathomctl table create|drop|list|resize: args are {"table", sub, [name]}.
int RunTable(const std::vector<std::string>& args) {
  const std::string sub = args.size() > 1 ? args[1] : "";
  const bool named = sub == "create" || sub == "drop" || sub == "resize";
  if (!named && sub != "list") return Usage("table: give create NAME, drop NAME, resize NAME or list");
  if (args.size() != (named ? 3u : 2u)) return Usage(absl::StrCat("table ", sub, (named ? ": give one NAME" : ": no arguments")));
  control::CreateTableRequest create;
  if (named) {
    create.set_name(args[2]);
    if (absl::Status s = control::ValidateTableName(args[2]); !s.ok()) return Usage(std::string(s.message()));
  }
  if (sub == "create") {
    auto kind = server::ParseTableKind(absl::GetFlag(FLAGS_kind));
    if (!kind.ok()) return Usage(std::string(kind.status().message()));
    create.set_kind(*kind);
    create.set_buckets(absl::GetFlag(FLAGS_buckets));
    create.set_inline_bytes(absl::GetFlag(FLAGS_inline_bytes));
    create.set_max_key_bytes(absl::GetFlag(FLAGS_max_key_bytes));
    create.set_max_value_bytes(absl::GetFlag(FLAGS_max_value_bytes));
    if (absl::Status s = control::ValidateCreateTableRequest(create); !s.ok()) return Usage(std::string(s.message()));
  }
  control::ResizeTableRequest resize;
  if (sub == "resize") {
    resize.set_name(args[2]);
    resize.set_buckets(absl::GetFlag(FLAGS_buckets));
    if (absl::Status s = control::ValidateResizeTableRequest(resize); !s.ok()) return Usage(std::string(s.message()));
  }
  auto token = ReadToken("table commands need the cluster token to call a member (--token_file or --token)");
  if (!token.ok()) return Usage(std::string(token.status().message()));
  auto config = ReadClusterConfiguration(ReadOptions());
  if (!config.ok()) return Failed("no cluster reachable", config.status());
  const server::TableCallOptions options{*token, absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_table_timeout)};
  const bool json = absl::GetFlag(FLAGS_json);
  if (sub == "create") {
    auto table = WithProgress(absl::StrCat("creating table ", args[2]), std::cerr,
                              [&] { return server::CreateTable(*config, create, options); });
    if (!table.ok()) return Failed(absl::StrCat("table create ", args[2]), table.status());
    std::cout << (json ? FormatTableJson(*table) : FormatCreatedText(*table));
  } else if (sub == "resize") {
    auto table = WithProgress(absl::StrCat("resizing table ", args[2]), std::cerr,
                              [&] { return server::ResizeTable(*config, resize, options); });
    if (!table.ok()) return Failed(absl::StrCat("table resize ", args[2]), table.status());
    std::cout << (json ? FormatTableJson(*table) : FormatResizedText(*table));
  } else if (sub == "drop") {
    const absl::Status s = WithProgress(absl::StrCat("dropping table ", args[2]), std::cerr,
                                        [&] { return server::DropTable(*config, args[2], options); });
    if (!s.ok()) return Failed(absl::StrCat("table drop ", args[2]), s);
    std::cout << (json ? absl::StrCat("{\"dropped\":", JsonString(args[2]), "}\n") : absl::StrCat("dropped table ", args[2], "\n"));
  } else {
    auto tables = server::ListTables(*config, options);
    if (!tables.ok()) return Failed("table list", tables.status());
    std::cout << (json ? FormatTablesJson(*tables) : FormatTablesText(*tables));
  }
  return 0;
}

// How get, put, delete and txn join the cluster (the token already read).
ClientOptions DataClientOptions(const std::string& token) {
  ClientOptions options;
  options.zookeeper = absl::GetFlag(FLAGS_zk);
  options.cluster = absl::GetFlag(FLAGS_cluster);
  options.token = token;
  options.tcp = absl::GetFlag(FLAGS_tcp);
  options.tls_ca_file = absl::GetFlag(FLAGS_tls_ca);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  return options;
}

int PrintDataResult(const DataResult& result) {
  std::cout << result.out << std::flush;
  if (!result.err.empty()) std::cerr << "fathomctl: " << result.err << std::endl;
  return result.exit_code;
}

// fathomctl txn SCRIPT|-.
int RunTxn(const std::vector<std::string>& args) {
  absl::StatusOr<std::vector<TxnOperation>> operations = ParseTxnScript(args, std::cin);
  if (!operations.ok()) return Usage(std::string(operations.status().message()));
  auto token = ReadToken("txn needs the cluster token to join the cluster (--token_file or --token)");
  if (!token.ok()) return Usage(std::string(token.status().message()));
  return PrintDataResult(RunTxnScript(DataClientOptions(*token), *operations, absl::GetFlag(FLAGS_json)));
}

// fathomctl get|put|delete: args are {verb, TABLE, KEY[, VALUE]}.
int RunData(const std::vector<std::string>& args) {
  absl::StatusOr<DataCommand> command = ParseDataCommand(args, std::cin);
  if (!command.ok()) return Usage(std::string(command.status().message()));
  auto token = ReadToken(absl::StrCat(args[0], " needs the cluster token to join the cluster (--token_file or --token)"));
  if (!token.ok()) return Usage(std::string(token.status().message()));
  return PrintDataResult(RunDataCommand(DataClientOptions(*token), *command, absl::GetFlag(FLAGS_json)));
}

// fathomctl replicas: 0 once every region's replicas agree, 1 if they still differ after --wait.
int RunReplicas() {
  auto token = ReadToken("replicas needs the cluster token to ask members for digests (--token_file or --token)");
  if (!token.ok()) return Usage(std::string(token.status().message()));
  // Generous per call: a member walks every replica it holds.
  const absl::Duration timeout = std::max(absl::GetFlag(FLAGS_rpc_timeout), absl::Seconds(30));
  const absl::Time give_up = absl::Now() + absl::GetFlag(FLAGS_wait);
  for (;;) {
    auto config = ReadClusterConfiguration(ReadOptions());
    if (!config.ok()) return Failed("no cluster reachable", config.status());
    const ReplicaReport report = CompareReplicas(*config, CollectMemberStats(*config, *token, absl::GetFlag(FLAGS_tls_ca), timeout, true));
    if (report.identical || absl::Now() >= give_up) {
      std::cout << report.text;
      return report.identical ? 0 : 1;
    }
    absl::SleepFor(absl::Seconds(1));
  }
}

int Run(const std::string& command) {
  if (command == "replicas") return RunReplicas();
  const bool status_command = command == "status";
  if (!status_command && command != "regions") return Usage(absl::StrCat("unknown command '", command, "'"));
  std::string token;
  const bool with_stats = status_command && absl::GetFlag(FLAGS_stats);
  if (with_stats) {
    auto read = ReadToken(
        "status needs the cluster token to ask members for their Stats (--token_file or --token; or --stats=false)");
    if (!read.ok()) return Usage(std::string(read.status().message()));
    token = *read;
  }
  const ClusterReadOptions options = ReadOptions();
  auto config = ReadClusterConfiguration(options);
  if (!config.ok()) {
    std::cerr << "fathomctl: " << config.status().ToString() << std::endl;
    return 1;
  }
  const bool json = absl::GetFlag(FLAGS_json);
  if (!status_command) {
    std::cout << (json ? FormatRegionsJson(*config) : FormatRegionsText(*config));
    return 0;
  }
  StatusView view{options.cluster, options.connect_string, *config, {}};
  if (with_stats) view.stats = CollectMemberStats(*config, token, absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_rpc_timeout));
  std::cout << (json ? FormatStatusJson(view) : FormatStatusText(view));
  const bool none_answered =
      with_stats && !view.stats.empty() &&
      std::none_of(view.stats.begin(), view.stats.end(), [](const MemberStats& m) { return m.status.ok(); });
  if (none_answered) {
    std::cerr << "fathomctl: none of the " << view.stats.size() << " members answered (reasons above)" << std::endl;
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace fathom::fathomctl

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(fathom::fathomctl::kUsage);
  std::vector<char*> parsed = absl::ParseCommandLine(argc, argv);
  if (absl::Status s = fathom::FillFlagsFromClusterFile(absl::GetFlag(FLAGS_cluster_file), {}); !s.ok()) {
    return fathom::fathomctl::Usage(std::string(s.message()));
  }
  const std::vector<std::string> args(parsed.begin() + 1, parsed.end());
  if (!args.empty() && args[0] == "table") return fathom::fathomctl::RunTable(args);
  if (!args.empty() && args[0] == "txn") return fathom::fathomctl::RunTxn(args);
  if (!args.empty() && (args[0] == "get" || args[0] == "put" || args[0] == "delete")) {
    return fathom::fathomctl::RunData(args);
  }
  if (args.size() != 1) {
    return fathom::fathomctl::Usage("give one command: status, regions, replicas, table, get, put, delete or txn");
  }
  return fathom::fathomctl::Run(args[0]);
}
