// fathomctl: looks at a Fathom cluster — its configuration in ZooKeeper and its members' live Stats.
//
//   fathomctl status  --zk=127.0.0.1:2181 --cluster=prod --token_file=/etc/fathom/token [--json]
//   fathomctl regions --zk=127.0.0.1:2181 --cluster=prod [--json]
//
// status: epoch, configuration manager, every member (control address, fabric, memory, incarnation) with
// a few live numbers from its Stats (peers connected, connected to ZooKeeper, epoch applied, uptime), the
// regions and their replicas. A member whose Stats fail is shown as unreachable, with the reason.
// regions: region id, size, primary, backups (ZooKeeper only; no token needed).
// Human-readable aligned columns by default; --json prints one line of JSON (shapes: report.h).
// Exit codes: 0 done (even with unreachable members), 1 the configuration could not be read (ZooKeeper
// unreachable, no such cluster, corrupt configuration), 2 bad usage.
#include <fstream>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tools/fathomctl/cluster_reader.h"
#include "tools/fathomctl/member_stats.h"
#include "tools/fathomctl/report.h"

ABSL_FLAG(std::string, zk, "127.0.0.1:2181", "ZooKeeper connect string host:port[,host:port]");
ABSL_FLAG(std::string, cluster, "fathom", "cluster name (the nodes' --cluster)");
ABSL_FLAG(std::string, token, "", "cluster token (prefer --token_file: flags are visible to other users)");
ABSL_FLAG(std::string, token_file, "", "file holding the cluster token (its first line)");
ABSL_FLAG(bool, json, false, "print one line of JSON instead of aligned columns");
ABSL_FLAG(bool, stats, true, "status: ask every member for its Stats (needs the token)");
ABSL_FLAG(absl::Duration, zk_timeout, absl::Seconds(5), "how long to wait for ZooKeeper");
ABSL_FLAG(absl::Duration, rpc_timeout, absl::Seconds(3), "how long to wait for each member's Stats");

namespace fathom::fathomctl {
namespace {

constexpr char kUsage[] =
    "fathomctl: look at a Fathom cluster.\n"
    "  fathomctl status  --zk=HOST:PORT --cluster=NAME --token_file=FILE [--json] [--stats=false]\n"
    "  fathomctl regions --zk=HOST:PORT --cluster=NAME [--json]\n"
    "More: fathomctl --help, and the header of tools/fathomctl/fathomctl.cc.";

int Usage(const std::string& message) {
  std::cerr << "fathomctl: " << message << "\n" << kUsage << std::endl;
  return 2;
}

absl::StatusOr<std::string> ReadToken() {
  const std::string inline_token = absl::GetFlag(FLAGS_token);
  const std::string path = absl::GetFlag(FLAGS_token_file);
  if (!inline_token.empty() && !path.empty()) return absl::InvalidArgumentError("give --token or --token_file, not both");
  if (!inline_token.empty()) return inline_token;
  if (path.empty()) {
    return absl::InvalidArgumentError(
        "status needs the cluster token to ask members for their Stats (--token_file or --token; or --stats=false)");
  }
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read token file ", path));
  std::string token;
  std::getline(in, token);
  return token;
}

int Run(const std::string& command) {
  const bool status_command = command == "status";
  if (!status_command && command != "regions") return Usage(absl::StrCat("unknown command '", command, "'"));
  std::string token;
  const bool with_stats = status_command && absl::GetFlag(FLAGS_stats);
  if (with_stats) {
    auto read = ReadToken();
    if (!read.ok()) return Usage(std::string(read.status().message()));
    token = *read;
  }
  ClusterReadOptions options;
  options.connect_string = absl::GetFlag(FLAGS_zk);
  options.cluster = absl::GetFlag(FLAGS_cluster);
  options.connect_timeout = absl::GetFlag(FLAGS_zk_timeout);
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
  if (with_stats) view.stats = CollectMemberStats(*config, token, absl::GetFlag(FLAGS_rpc_timeout));
  std::cout << (json ? FormatStatusJson(view) : FormatStatusText(view));
  return 0;
}

}  // namespace
}  // namespace fathom::fathomctl

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(fathom::fathomctl::kUsage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) return fathom::fathomctl::Usage("give one command: status or regions");
  return fathom::fathomctl::Run(args[1]);
}
