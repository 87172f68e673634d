// fathomd: one Fathom node as a process: the flags of a server::Server (server/server.h).
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
// until SIGTERM, SIGINT or a Shutdown call (SIGUSR1 logs its connections and rings; SIGUSR2 arms or
// disarms the test-only --crash_at_record). With --metrics_port it serves Prometheus metrics at
// http://--metrics_host:PORT/metrics (docs/formats/metrics.md) and adds " metrics=<host:port>" to READY.
// With --zk it also
// serves the control service's table calls
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
#include <atomic>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "platform/base/log.h"
#include "platform/metrics/http_endpoint.h"
#include "platform/node/control/cluster_token.h"
#include "platform/node/control/host_port.h"
#include "platform/node/node_options.h"
#include "server/crash_at_record.h"
#include "server/metrics_page.h"
#include "server/server.h"

ABSL_FLAG(uint32_t, node_id, 0, "this node's id, 1..65535 (required)");
ABSL_FLAG(std::string, cluster, "fathom", "cluster name; every node of a cluster uses the same");
ABSL_FLAG(std::string, listen, "127.0.0.1:7000", "control service address, host:port (port 0: pick one)");
ABSL_FLAG(std::string, peers, "", "other nodes, id@host:port,... (without --zk)");
ABSL_FLAG(std::string, zk, "", "ZooKeeper connect string host:port[,host:port]: membership from the coordinator");
ABSL_FLAG(absl::Duration, zk_session_timeout, absl::Seconds(20),
          "ZooKeeper session timeout (the server clamps it to 2..20 ticks). With leases, a dead node is "
          "removed when its lease lapses and a dead CM is deposed by its members, so this bounds how long the "
          "cluster outlives a ZooKeeper outage: the CM keeps granting leases for this minus 2 lease periods. "
          "Without leases, how long a dead node stays a member");
ABSL_FLAG(absl::Duration, lease_period, absl::Seconds(2),
          "with --zk: lease the configuration manager grants over the node runtime; a member that does not "
          "renew it within this is removed (0: no leases, only ZooKeeper sessions)");
ABSL_FLAG(bool, lease_channel, true,
          "with leases: requests and grants on a UDP socket and thread of their own, on the --listen host "
          "(false: over the node threads' rings)");
ABSL_FLAG(std::string, memory, "256M", "memory this node contributes (K, M, G suffixes)");
ABSL_FLAG(std::string, fill_rate, "64M",
          "data recovery's pace: bytes per second this node copies to the new backups of the regions it is "
          "primary of, all together (K, M, G suffixes; 0: as fast as it can)");
ABSL_FLAG(std::string, region_size, "64M", "size of each memory region (multiple of 1M, at most 4G)");
ABSL_FLAG(int, threads, 2, "worker threads; every node of a cluster must use the same number");
// 20 ms, not the library's 5: an idle fathomd then wakes 50 times a second per node thread instead of 200
// (0.4-0.5% of a core per node instead of 0.9-1.5%). Work resets the sleep to 100 us, doubling from there, so
// a timer set while busy still runs within a few ms; only timers of a thread idle for longer run up to 20 ms late.
ABSL_FLAG(absl::Duration, idle_wait, absl::Milliseconds(20),
          "longest sleep of an idle node thread: a message wakes it sooner (over shared memory by a doorbell), "
          "so this bounds how late the timers of a thread idle that long run");
ABSL_FLAG(absl::Duration, busy_poll, absl::ZeroDuration(),
          "how long a node thread keeps polling (yielding) after its last work before it sleeps; 0: sleep at "
          "once, woken by messages. Worth it only with a core to spare per node thread");
ABSL_FLAG(bool, batch_scheduling, false,
          "node threads run under SCHED_BATCH: woken by a message they wait for the waker's next yield instead of "
          "preempting it. Faster where this node's CPU serves no reads (shared memory), slower over tcp "
          "(tools/cluster.sh turns it on with --transports=sm)");
ABSL_FLAG(std::string, transports, "",
          "UCX transports (UCX_TLS syntax): sm for one host, tcp across hosts, rc with RDMA NICs; empty: UCX_TLS");
ABSL_FLAG(std::string, token, "", "cluster token (prefer --token_file: flags are visible to other users)");
ABSL_FLAG(std::string, token_file, "", "file holding the cluster token");
ABSL_FLAG(std::string, tls_cert, "", "TLS certificate for the control service (PEM); with --tls_key");
ABSL_FLAG(std::string, tls_key, "", "TLS private key (PEM)");
ABSL_FLAG(std::string, tls_ca, "", "CA certificate to verify peers' control services (PEM)");
ABSL_FLAG(absl::Duration, join_timeout, absl::Seconds(30), "how long to wait for the listed peers");
ABSL_FLAG(int, backups, 1, "f: backups of every region in memory (transactions replicate to f+1 nodes)");
ABSL_FLAG(std::string, failure_domain, "",
          "with --zk: what this node fails together with (host, rack); a region's replicas go to distinct "
          "domains where they can (empty: its own)");
ABSL_FLAG(std::string, data_dir, "",
          "directory of this node's SSD log (created if missing); if it holds a log, the node restarts from it "
          "(with every other member, listed in --peers). Empty: no log");
ABSL_FLAG(bool, log_fsync, false,
          "fsync every log batch: the log then survives power loss, not only a killed process (costs latency "
          "on the log's own thread, not on Commit)");
ABSL_FLAG(std::string, txn_members, "",
          "without --zk: the nodes that hold data and replicas, id,id,... (default: this node and --peers); "
          "every node of the cluster must list the same. With --zk the configuration says.");
ABSL_FLAG(int, metrics_port, -1,
          "serve Prometheus metrics over HTTP at http://HOST:PORT/metrics (-1: off; 0: a free port, printed in "
          "the READY line)");
ABSL_FLAG(std::string, metrics_host, "127.0.0.1",
          "address the metrics endpoint listens on (0.0.0.0 or :: for every interface: the page is not "
          "authenticated)");
ABSL_FLAG(std::string, log_level, "info",
          "the least severe log lines written to stderr: debug, info, warning or error (format: "
          "docs/formats/log-lines.md)");
ABSL_FLAG(std::string, crash_at_record, "",
          "tests only: KIND:N (KIND lock, commit_backup, commit_primary, abort or truncate); while armed (each "
          "SIGUSR2 arms or disarms) the node kills itself (SIGKILL) the Nth time it handled a transaction record "
          "of KIND, before replying");

namespace fathom::server {
namespace {

void Log(const std::string& message, LogLevel level = LogLevel::kInfo) { LogLine(level, "fathomd", message); }

int BadFlags(const std::string& message) {
  std::cerr << "fathomd: " << message << "\n(see fathomd --help)" << std::endl;
  return 2;
}

// --txn_members as ids (empty: the server's default, this node and its --peers).
absl::StatusOr<std::vector<uint32_t>> ParseMembers(const std::string& flag) {
  std::vector<uint32_t> members;
  if (flag.empty()) return members;
  for (absl::string_view part : absl::StrSplit(flag, ',')) {
    uint32_t member = 0;
    if (!absl::SimpleAtoi(part, &member) || member == 0 || member > node::kMaxNodeId) {
      return absl::InvalidArgumentError(absl::StrCat("--txn_members: '", part, "' is not a node id"));
    }
    members.push_back(member);
  }
  return members;
}

// Flipped by SIGUSR2 (the signal loop in Run): --crash_at_record counts while it is set.
std::atomic<bool> crash_armed{false};

// The flags as server options; InvalidArgument names the flag.
absl::StatusOr<ServerOptions> OptionsFromFlags() {
  ServerOptions options;
  node::NodeOptions& node = options.node;
  node.node_id = absl::GetFlag(FLAGS_node_id);
  if (node.node_id == 0) return absl::InvalidArgumentError("--node_id is required (1..65535)");
  node.cluster_name = absl::GetFlag(FLAGS_cluster);
  node.listen_address = absl::GetFlag(FLAGS_listen);
  auto peers = node::ParsePeers(absl::GetFlag(FLAGS_peers));
  if (!peers.ok()) return absl::InvalidArgumentError(absl::StrCat("--peers: ", peers.status().message()));
  node.peers = *peers;
  auto memory = node::ParseBytes(absl::GetFlag(FLAGS_memory));
  if (!memory.ok()) return absl::InvalidArgumentError(absl::StrCat("--memory: ", memory.status().message()));
  node.memory_bytes = *memory;
  auto region = node::ParseBytes(absl::GetFlag(FLAGS_region_size));
  if (!region.ok()) return absl::InvalidArgumentError(absl::StrCat("--region_size: ", region.status().message()));
  node.region_bytes = std::min(*region, node.memory_bytes);
  node.worker_threads = absl::GetFlag(FLAGS_threads);
  node.idle_wait = absl::GetFlag(FLAGS_idle_wait);
  if (node.idle_wait <= absl::ZeroDuration()) return absl::InvalidArgumentError("--idle_wait must be positive");
  node.busy_poll_window = absl::GetFlag(FLAGS_busy_poll);
  node.batch_scheduling = absl::GetFlag(FLAGS_batch_scheduling);
  if (node.busy_poll_window < absl::ZeroDuration() || node.busy_poll_window > absl::Seconds(1)) {
    return absl::InvalidArgumentError("--busy_poll must be between 0 and 1s");
  }
  auto token = control::TokenFromFlags(absl::GetFlag(FLAGS_token), absl::GetFlag(FLAGS_token_file),
                                       "a cluster token is required (--token_file or --token)");
  if (!token.ok()) return absl::InvalidArgumentError(token.status().message());
  node.cluster_token = *token;
  node.tls.certificate_path = absl::GetFlag(FLAGS_tls_cert);
  node.tls.private_key_path = absl::GetFlag(FLAGS_tls_key);
  node.tls_ca_path = absl::GetFlag(FLAGS_tls_ca);
  node.join_timeout = absl::GetFlag(FLAGS_join_timeout);
  options.transports = absl::GetFlag(FLAGS_transports);
  options.zookeeper = absl::GetFlag(FLAGS_zk);
  options.zookeeper_session_timeout = absl::GetFlag(FLAGS_zk_session_timeout);
  options.lease_period = absl::GetFlag(FLAGS_lease_period);
  options.lease_channel = absl::GetFlag(FLAGS_lease_channel);
  options.transactions.backups = absl::GetFlag(FLAGS_backups);
  auto fill_rate = node::ParseBytes(absl::GetFlag(FLAGS_fill_rate));
  if (!fill_rate.ok()) return absl::InvalidArgumentError(absl::StrCat("--fill_rate: ", fill_rate.status().message()));
  options.transactions.fill_bytes_per_second = *fill_rate;
  options.failure_domain = absl::GetFlag(FLAGS_failure_domain);
  auto members = ParseMembers(absl::GetFlag(FLAGS_txn_members));
  if (!members.ok()) return members.status();
  options.txn_members = *members;
  options.data_dir = absl::GetFlag(FLAGS_data_dir);
  options.log_fsync = absl::GetFlag(FLAGS_log_fsync);
  if (const std::string crash_flag = absl::GetFlag(FLAGS_crash_at_record); !crash_flag.empty()) {
    absl::StatusOr<CrashAtRecord> crash = ParseCrashAtRecord(crash_flag);
    if (!crash.ok()) return crash.status();
    options.transactions.on_record = CrashAtRecordHook(*crash, &crash_armed, [] { raise(SIGKILL); });
  }
  options.log_line = [](const std::string& line) { Log(line); };
  return options;
}

int Run() {
  auto options = OptionsFromFlags();
  if (!options.ok()) return BadFlags(std::string(options.status().message()));
  const uint32_t id = options->node.node_id;
  SetLogNode(id);
  auto level = ParseLogLevel(absl::GetFlag(FLAGS_log_level));
  if (!level.ok()) return BadFlags(absl::StrCat("--log_level: ", level.status().message()));
  SetLogLevel(*level);
  auto server = Server::Start(*std::move(options));
  if (!server.ok()) {
    if (absl::IsInvalidArgument(server.status())) return BadFlags(std::string(server.status().message()));
    Log(server.status().ToString(), LogLevel::kError);
    return 1;
  }
  node::Node& node = (*server)->node();
  TableMemory table_memory(Clock::Real());  // before the endpoint that uses it: destroyed after it
  std::unique_ptr<metrics::HttpEndpoint> metrics_endpoint;
  if (const int port = absl::GetFlag(FLAGS_metrics_port); port >= 0) {
    metrics::HttpEndpointOptions metrics_options;
    metrics_options.host = absl::GetFlag(FLAGS_metrics_host);
    metrics_options.port = port;
    Server* serving = server->get();
    auto endpoint = metrics::HttpEndpoint::Start(
        metrics_options, [serving, &table_memory] { return MetricsPage(*serving, &table_memory); });
    if (!endpoint.ok()) {
      Log(absl::StrCat("--metrics_port: ", endpoint.status().ToString()), LogLevel::kError);
      (*server)->Stop();
      return absl::IsInvalidArgument(endpoint.status()) ? 2 : 1;
    }
    metrics_endpoint = *std::move(endpoint);
  }
  std::vector<std::string> connected;
  for (uint32_t peer : node.connected_peers()) connected.push_back(absl::StrCat(peer));
  Log(absl::StrCat("ready; peers: [", absl::StrJoin(connected, ","), "]"));
  std::cout << "READY node=" << id << " control=" << node.control_address();
  if (metrics_endpoint != nullptr) {
    const std::string host = absl::GetFlag(FLAGS_metrics_host);
    std::cout << " metrics=" << control::JoinHostPort(host, metrics_endpoint->port());
  }
  std::cout << std::endl;

  // Signals were blocked before any thread started, so only this loop sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  sigaddset(&signals, SIGUSR2);
  std::string reason;
  while (reason.empty()) {
    timespec tick{0, 100'000'000};
    const int signal = sigtimedwait(&signals, nullptr, &tick);
    if (signal == SIGTERM || signal == SIGINT) reason = signal == SIGTERM ? "SIGTERM" : "SIGINT";
    // Its connections, rings and reads in flight: for an operator whose operations stopped completing.
    if (signal == SIGUSR1) Log(absl::StrCat("state on SIGUSR1:\n", node.Describe()));
    if (signal == SIGUSR2 && !absl::GetFlag(FLAGS_crash_at_record).empty()) {
      const bool armed = !crash_armed.load(std::memory_order_acquire);
      crash_armed.store(armed, std::memory_order_release);
      Log(absl::StrCat("--crash_at_record=", absl::GetFlag(FLAGS_crash_at_record),
                           armed ? " armed (SIGUSR2)" : " disarmed (SIGUSR2)"));
    }
    if (node.shutdown_requested()) reason = "a Shutdown call";
  }
  Log(absl::StrCat("stopping (", reason, ")"));
  if (metrics_endpoint != nullptr) metrics_endpoint->Stop();  // its page reads the server
  (*server)->Stop();
  Log("stopped");
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
  sigaddset(&signals, SIGUSR1);
  sigaddset(&signals, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return fathom::server::Run();
}
