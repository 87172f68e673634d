// fathomd: one Fathom node as a process.
//
//   fathomd --node_id=1 --listen=0.0.0.0:7001 --token_file=/etc/fathom/token --memory=4G --threads=4 \
//           --transports=tcp --peers=2@10.0.0.2:7001,3@10.0.0.3:7001
//
// It allocates and registers its memory, starts its worker threads and control service, joins every peer
// listed (waiting up to --join_timeout for them to come up), prints "READY node=<id> control=<host:port>"
// on stdout, and serves until SIGTERM, SIGINT or a Shutdown call. Exit codes: 0 clean stop, 1 a runtime
// failure (port in use, peer unreachable, memory not available), 2 bad flags.
#include <signal.h>
#include <time.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "platform/fabric/ucx/ucx_fabric.h"
#include "platform/node/node.h"

ABSL_FLAG(uint32_t, node_id, 0, "this node's id, 1..65535 (required)");
ABSL_FLAG(std::string, cluster, "fathom", "cluster name; every node of a cluster uses the same");
ABSL_FLAG(std::string, listen, "127.0.0.1:7000", "control service address, host:port (port 0: pick one)");
ABSL_FLAG(std::string, peers, "", "other nodes, id@host:port,...");
ABSL_FLAG(std::string, memory, "256M", "memory this node contributes (K, M, G suffixes)");
ABSL_FLAG(std::string, region_size, "64M", "size of each memory region (multiple of 1M, at most 4G)");
ABSL_FLAG(int, threads, 2, "worker threads; every node of a cluster must use the same number");
ABSL_FLAG(std::string, transports, "",
          "UCX transports (UCX_TLS syntax): sm for one host, tcp across hosts, rc with RDMA NICs; empty: UCX_TLS");
ABSL_FLAG(std::string, token, "", "cluster token (prefer --token_file: flags are visible to other users)");
ABSL_FLAG(std::string, token_file, "", "file holding the cluster token");
ABSL_FLAG(std::string, tls_cert, "", "TLS certificate for the control service (PEM); with --tls_key");
ABSL_FLAG(std::string, tls_key, "", "TLS private key (PEM)");
ABSL_FLAG(std::string, tls_ca, "", "CA certificate to verify peers' control services (PEM)");
ABSL_FLAG(absl::Duration, join_timeout, absl::Seconds(30), "how long to wait for the listed peers");

namespace fathom::node {
namespace {

void Log(uint32_t node, const std::string& message) {
  std::cerr << absl::FormatTime("%Y-%m-%d %H:%M:%E3S", absl::Now(), absl::LocalTimeZone()) << " fathomd[" << node
            << "]: " << message << std::endl;
}

int BadFlags(const std::string& message) {
  std::cerr << "fathomd: " << message << "\n(see fathomd --help)" << std::endl;
  return 2;
}

absl::StatusOr<std::string> ReadToken() {
  const std::string inline_token = absl::GetFlag(FLAGS_token);
  const std::string path = absl::GetFlag(FLAGS_token_file);
  if (!inline_token.empty() && !path.empty()) return absl::InvalidArgumentError("give --token or --token_file, not both");
  if (!inline_token.empty()) return inline_token;
  if (path.empty()) return absl::InvalidArgumentError("a cluster token is required (--token_file or --token)");
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read token file ", path));
  std::string token;
  std::getline(in, token);
  return token;
}

int Run() {
  NodeOptions options;
  options.node_id = absl::GetFlag(FLAGS_node_id);
  if (options.node_id == 0) return BadFlags("--node_id is required (1..65535)");
  options.cluster_name = absl::GetFlag(FLAGS_cluster);
  options.listen_address = absl::GetFlag(FLAGS_listen);
  auto peers = ParsePeers(absl::GetFlag(FLAGS_peers));
  if (!peers.ok()) return BadFlags(absl::StrCat("--peers: ", peers.status().message()));
  options.peers = *peers;
  auto memory = ParseBytes(absl::GetFlag(FLAGS_memory));
  if (!memory.ok()) return BadFlags(absl::StrCat("--memory: ", memory.status().message()));
  options.memory_bytes = *memory;
  auto region = ParseBytes(absl::GetFlag(FLAGS_region_size));
  if (!region.ok()) return BadFlags(absl::StrCat("--region_size: ", region.status().message()));
  options.region_bytes = std::min(*region, options.memory_bytes);
  options.worker_threads = absl::GetFlag(FLAGS_threads);
  auto token = ReadToken();
  if (!token.ok()) return BadFlags(std::string(token.status().message()));
  options.cluster_token = *token;
  options.tls.certificate_path = absl::GetFlag(FLAGS_tls_cert);
  options.tls.private_key_path = absl::GetFlag(FLAGS_tls_key);
  options.tls_ca_path = absl::GetFlag(FLAGS_tls_ca);
  options.join_timeout = absl::GetFlag(FLAGS_join_timeout);
  const uint32_t id = options.node_id;

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
  auto node = Node::Start(options, std::move(*fabric));
  if (!node.ok()) {
    Log(id, absl::StrCat("cannot start: ", node.status().ToString()));
    return absl::IsInvalidArgument(node.status()) ? 2 : 1;
  }
  Log(id, absl::StrCat("control service on ", (*node)->control_address(), ", incarnation ", (*node)->incarnation()));
  if (!options.peers.empty()) {
    Log(id, absl::StrCat("joining ", options.peers.size(), " peers"));
    if (absl::Status joined = (*node)->JoinPeers(); !joined.ok()) {
      Log(id, joined.ToString());
      (*node)->Stop();
      return 1;
    }
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
  (*node)->Stop();
  Log(id, "stopped");
  return 0;
}

}  // namespace
}  // namespace fathom::node

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("fathomd: one node of a Fathom cluster. See the header of platform/node/fathomd.cc.");
  absl::ParseCommandLine(argc, argv);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return fathom::node::Run();
}
