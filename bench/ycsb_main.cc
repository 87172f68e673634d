// ycsb: YCSB's core workload against Fathom (an embedded cluster this process starts over UCX: the
// default), memcached, Redis, or this process's memory. Starts its own memcached / redis-server on a free
// loopback port unless --server is given.
//
//   bazel run -c opt //bench:ycsb -- --workload=b                      (fathom, 3 nodes over shared memory)
//   bazel run -c opt //bench:ycsb -- --workload=b --fathom_fabric=tcp
//   ycsb --workload=b --zk=127.0.0.1:2181 --cluster=prod --token_file=/etc/fathom/token
//                                         (a running fathomd cluster, joined as a client-only member)
//   bazel run -c opt //bench:ycsb -- --backend=redis --workload=a --threads=2
//   bazel run -c opt //bench:ycsb -- --backend=memcached -P /path/workloadb -p recordcount=100000 -load -run
//
// YCSB-style arguments are accepted beside the flags: -P <file>, -p key=value (repeatable), -load, -run.
// Report on stdout in YCSB's format (one section per phase), progress and errors on stderr. Operations
// that ended in error are listed per phase ("[ERRORS], <count>, <OP>: <status>") and make the exit status
// 1; fathom's node clients first retry transient failures for --retry_deadline.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/ycsb/async_runner.h"
#include "bench/ycsb/core_workload.h"
#include "bench/ycsb/crash_at_step.h"
#include "bench/ycsb/cpu_usage.h"
#include "bench/ycsb/fathom_backend.h"
#include "bench/ycsb/fathom_remote.h"
#include "bench/ycsb/memcached_backend.h"
#include "bench/ycsb/memory_backend.h"
#include "bench/ycsb/properties.h"
#include "bench/ycsb/record_codec.h"
#include "bench/ycsb/server_memory.h"
#include "bench/ycsb/redis_backend.h"
#include "fathom/cluster_file_flags.h"
#include "bench/ycsb/report.h"
#include "bench/ycsb/runner.h"
#include "bench/ycsb/server_process.h"
#include "platform/base/runfiles.h"
#include "platform/node/control/cluster_token.h"
#include "platform/node/control/host_port.h"
#include "platform/base/status_macros.h"

ABSL_FLAG(std::string, workload, "a",
          "workload a..f, or bank (transactional transfers): bench/workloads/workload<name> from the runfiles");
ABSL_FLAG(std::string, workload_file, "", "a workload properties file (overrides --workload)");
ABSL_FLAG(std::string, backend, "fathom",
          "fathom (an embedded Fathom cluster in this process, or a running one with --zk) | memcached | redis | memory");
ABSL_FLAG(std::string, fathom_fabric, "shm", "fathom backend: shm (UCX shared memory) or tcp (UCX tcp)");
ABSL_FLAG(int, fathom_nodes, 3, "fathom backend: nodes of the embedded cluster");
ABSL_FLAG(int, fathom_backups, 1, "fathom backend: f, backups of every record");
ABSL_FLAG(int, fathom_threads, 0,
          "fathom backend: node threads per node; 0: 1 for an embedded cluster (three nodes share 2 cores better "
          "than six threads do), and with --zk the members' own (every node of a cluster runs the same number)");
// The clients run on the driver's node threads, so replies usually come within tens of microseconds of
// the last work: polling that long saves a sleep and a wake-up per reply (docs/benchmarks.md, "The
// driver's node threads poll 50 us after work").
ABSL_FLAG(absl::Duration, fathom_busy_poll, absl::Microseconds(50),
          "fathom backend: how long the driver's node threads (an embedded cluster's, or its own node's with "
          "--zk) poll after their last work before they sleep, like fathomd --busy_poll; 0 to 1s, 0: sleep at "
          "once");
ABSL_FLAG(std::string, fathom_clients, "node",
          "fathom backend: node (clients run on the cluster's node threads, asynchronously, one operation in "
          "flight each) or app (one application thread per client, blocking calls)");
ABSL_FLAG(std::string, zk, "",
          "fathom backend: ZooKeeper host:port[,...] of a running fathomd cluster to join as a client-only member "
          "(its --zk); empty: start an embedded cluster");
ABSL_FLAG(std::string, cluster, "fathom", "fathom backend with --zk: the cluster's name (its --cluster)");
ABSL_FLAG(std::string, cluster_file, "",
          "fathom backend: a cluster file (tools/cluster.sh writes DIR/cluster): --zk, --cluster, --token_file and "
          "--fathom_fabric from it, unless given");
ABSL_FLAG(std::string, token, "", "fathom backend with --zk: cluster token (prefer --token_file)");
ABSL_FLAG(std::string, token_file, "", "fathom backend with --zk: file holding the cluster token");
ABSL_FLAG(std::string, tls_ca, "",
          "fathom backend with --zk, members with TLS control services: the CA certificate (PEM) they chain to");
ABSL_FLAG(std::string, tls_cert, "",
          "with --tls_ca: a certificate (PEM) that CA signed, for the driver's own control service");
ABSL_FLAG(std::string, tls_key, "", "with --tls_ca: --tls_cert's private key (PEM)");
ABSL_FLAG(uint32_t, fathom_node_id, 0, "fathom backend with --zk: this client's node id; 0: the highest free one");
ABSL_FLAG(std::string, fathom_listen, "127.0.0.1:0",
          "fathom backend with --zk: this client's control address, host:port (port 0: pick one); the members "
          "call it, so it must be reachable from them (tools/cluster.sh --netns: the bridge's address)");
ABSL_FLAG(std::string, fathom_table, "usertable",
          "fathom backend with --zk: the table (created through the cluster, sized for the records, if missing)");
ABSL_FLAG(std::string, server, "", "host:port of a running server; empty: start one on a free loopback port");
ABSL_FLAG(bool, memcached_large_pages, false,
          "memcached started by the driver gets -L (its item memory on huge pages where the host has them), as "
          "tools/compare_ycsb.sh gives it when Fathom's servers run on huge pages");
ABSL_FLAG(std::string, server_pids, "",
          "comma-separated process ids whose CPU time the report counts as the servers' (a running cluster's "
          "fathomd processes, a --server on this machine); a server the driver starts itself is counted anyway");
ABSL_FLAG(int, threads, 1, "client threads");
ABSL_FLAG(double, target, 0, "target operations per second over all threads; 0: unthrottled");
ABSL_FLAG(std::string, props, "", "comma-separated key=value overrides (like repeated -p)");
ABSL_FLAG(std::string, phase, "both",
          "load | run | both | verify (run or verify alone needs --server or --zk with loaded data; verify reads "
          "every loaded record once and fails if any is missing or unreadable)");
ABSL_FLAG(std::string, json_out, "", "also write the report as JSON to this path");
ABSL_FLAG(uint64_t, seed, 0, "random seed; 0: pick one from the clock (printed to stderr)");
ABSL_FLAG(int64_t, warmup_ops, 0, "unmeasured operations before the run phase's clock starts");
ABSL_FLAG(int, status_interval_s, 3, "seconds between progress lines on stderr");
ABSL_FLAG(std::string, timeline_out, "",
          "if set, the run phase writes '<unix ms> <operations done>' lines to this file every --timeline_ms "
          "(tools/recovery_timeline.py turns a fault run's into recovery times and a plot)");
ABSL_FLAG(int, timeline_ms, 50, "milliseconds between --timeline_out lines");
ABSL_FLAG(std::string, crash_at_step, "",
          "tests only, with --zk: STEP:N kills this driver (SIGKILL) the Nth time one of its commits reaches "
          "STEP (lock, validate, commit_backup, commit_primary, truncate, truncate_withheld, abort)");
ABSL_FLAG(absl::Duration, retry_deadline, absl::Seconds(10),
          "fathom backend, node clients: an operation that fails with Unavailable, DeadlineExceeded or "
          "Cancelled (a member failed, a connection is being made again) is tried again with backoff until "
          "this long after its first failure; 0: never. The default covers a killed CM with 2 s leases "
          "(suspicion, then a lease period before its regions move: ~4-5 s) on a loaded machine");

namespace fathom::ycsb {
namespace {

struct YcsbArgs {
  std::vector<std::string> assignments;  // -p key=value
  std::string properties_file;           // -P file
  bool load = false;                     // -load
  bool run = false;                      // -run
};

// Pulls YCSB's own argument forms out of argv before absl sees them (absl flags cannot repeat -p).
absl::StatusOr<YcsbArgs> ExtractYcsbArgs(int* argc, char** argv) {
  YcsbArgs args;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-p" || arg == "-P") {
      if (i + 1 >= *argc) return absl::InvalidArgumentError(absl::StrCat(arg, " needs an argument"));
      (arg == "-p" ? args.assignments.emplace_back() : args.properties_file) = argv[++i];
    } else if (arg == "-load") {
      args.load = true;
    } else if (arg == "-run" || arg == "-t") {  // YCSB spells run "-t" (transactions) too
      args.run = true;
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  return args;
}

absl::StatusOr<std::string> ReadToken() {
  return control::TokenFromFlags(absl::GetFlag(FLAGS_token), absl::GetFlag(FLAGS_token_file),
                                 "--zk needs the cluster token (--token_file or --token)");
}

// Which phases run: YCSB's -load / -run, else --phase.
struct Phases {
  bool load = false;
  bool run = false;
  bool verify = false;
};

absl::StatusOr<Phases> ChoosePhases(const YcsbArgs& args) {
  Phases phases;
  if (args.load || args.run) {
    phases.load = args.load;
    phases.run = args.run;
  } else {
    const std::string phase = absl::GetFlag(FLAGS_phase);
    if (phase != "load" && phase != "run" && phase != "both" && phase != "verify") {
      return absl::InvalidArgumentError(absl::StrCat("--phase=", phase, ": want load, run, both or verify"));
    }
    phases.verify = phase == "verify";
    phases.load = phase == "load" || phase == "both";
    phases.run = phase == "run" || phase == "both";
  }
  if ((phases.run || phases.verify) && !phases.load && absl::GetFlag(FLAGS_server).empty() &&
      absl::GetFlag(FLAGS_zk).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a ", phases.verify ? "verify" : "run",
        " without a load needs --server=host:port of a loaded server (or --zk of a loaded Fathom cluster)"));
  }
  return phases;
}

// The backend the clients talk to, and everything it runs on.
// (The owners come first: they are destroyed after the calls that point into them.)
struct ChosenBackend {
  std::string name;  // --backend
  std::unique_ptr<MemoryStore> memory_store;       // --backend=memory
  std::unique_ptr<ServerProcess> server_process;   // memcached or redis-server started here
  std::unique_ptr<FathomCluster> fathom_cluster;   // an embedded cluster
  std::unique_ptr<RemoteFathom> fathom_remote;     // --zk: this process is a client-only member
  BackendFactory make_backend;
  // Clients on a Fathom cluster's node threads (--fathom_clients=node): the lanes they run on.
  bool async_lanes = false;
  AsyncLanes* lanes = nullptr;
  // What the servers' accounting says the data takes (server_memory.h); empty where there is no server.
  std::function<absl::StatusOr<ServerMemory>()> server_memory;
};

// --backend=fathom: an embedded cluster, or a running one joined with --zk.
absl::Status ChooseFathom(const CoreWorkload& workload, const Phases& phases, ChosenBackend& chosen) {
  if (!absl::GetFlag(FLAGS_server).empty()) {
    return absl::InvalidArgumentError("--backend=fathom takes no --server: join a running cluster with --zk and --cluster");
  }
  const std::string fabric = absl::GetFlag(FLAGS_fathom_fabric);
  if (fabric != "shm" && fabric != "tcp") return absl::InvalidArgumentError("--fathom_fabric: want shm or tcp");
  const std::string clients = absl::GetFlag(FLAGS_fathom_clients);
  if (clients != "node" && clients != "app") return absl::InvalidArgumentError("--fathom_clients: want node or app");
  chosen.async_lanes = clients == "node";
  FathomClusterOptions fathom_options;
  fathom_options.nodes = absl::GetFlag(FLAGS_fathom_nodes);
  fathom_options.backups = absl::GetFlag(FLAGS_fathom_backups);
  const int fathom_threads = absl::GetFlag(FLAGS_fathom_threads);
  if (fathom_threads < 0) return absl::InvalidArgumentError("--fathom_threads must be >= 0");
  fathom_options.threads_per_node = fathom_threads == 0 ? 1 : fathom_threads;
  fathom_options.tcp = fabric == "tcp";
  fathom_options.retry_deadline = absl::GetFlag(FLAGS_retry_deadline);
  fathom_options.busy_poll = absl::GetFlag(FLAGS_fathom_busy_poll);
  if (fathom_options.busy_poll < absl::ZeroDuration() || fathom_options.busy_poll > absl::Seconds(1)) {
    return absl::InvalidArgumentError("--fathom_busy_poll must be between 0 and 1s");
  }
  const WorkloadConfig& sizing = workload.config();
  // Room for the load and for the run's inserts.
  fathom_options.records = sizing.record_count +
                           static_cast<uint64_t>(sizing.operation_count * sizing.insert_proportion) + 1;
  {
    Record largest;  // every field at its longest
    for (int64_t f = 0; f < sizing.field_count; ++f) {
      largest[absl::StrCat(sizing.field_name_prefix, f)] = std::string(static_cast<size_t>(sizing.field_length), 'x');
    }
    fathom_options.record_bytes = EncodeRecord(largest).size();
  }
  const std::string zk = absl::GetFlag(FLAGS_zk);
  if (zk.empty() && !absl::GetFlag(FLAGS_crash_at_step).empty()) {
    return absl::InvalidArgumentError("--crash_at_step needs --zk (the driver as a client of a running cluster)");
  }
  if (zk.empty()) {
    ASSIGN_OR_RETURN(chosen.fathom_cluster, FathomCluster::Start(fathom_options));
    std::fprintf(stderr, "started an embedded Fathom cluster: %s; clients on %s\n",
                 chosen.fathom_cluster->Describe().c_str(), chosen.async_lanes ? "its node threads" : "application threads");
    FathomCluster* cluster = chosen.fathom_cluster.get();
    chosen.make_backend = [cluster] { return cluster->NewBackend(); };
    chosen.server_memory = [cluster] { return cluster->ObjectMemory(); };
    chosen.lanes = cluster;
    return absl::OkStatus();
  }
  RemoteFathomOptions remote_options;
  remote_options.member.zookeeper = zk;
  remote_options.member.cluster = absl::GetFlag(FLAGS_cluster);
  ASSIGN_OR_RETURN(remote_options.member.token, ReadToken());
  remote_options.member.tcp = fathom_options.tcp;
  remote_options.member.threads = fathom_threads;  // 0: ask a member
  remote_options.member.busy_poll = fathom_options.busy_poll;
  remote_options.member.node_id = absl::GetFlag(FLAGS_fathom_node_id);
  remote_options.member.listen = absl::GetFlag(FLAGS_fathom_listen);
  remote_options.member.tls_ca_path = absl::GetFlag(FLAGS_tls_ca);
  remote_options.member.tls = {.certificate_path = absl::GetFlag(FLAGS_tls_cert),
                               .private_key_path = absl::GetFlag(FLAGS_tls_key)};
  remote_options.table = absl::GetFlag(FLAGS_fathom_table);
  remote_options.records = fathom_options.records;
  remote_options.record_bytes = fathom_options.record_bytes;
  remote_options.create_table = phases.load;  // a run alone must find the table a load made
  remote_options.seed = absl::GetFlag(FLAGS_seed) | 1;
  remote_options.retry_deadline = fathom_options.retry_deadline;
  if (const std::string crash = absl::GetFlag(FLAGS_crash_at_step); !crash.empty()) {
    ASSIGN_OR_RETURN(CrashAtStep at, ParseCrashAtStep(crash));
    remote_options.member.on_commit_step = CrashHook(at, [] { raise(SIGKILL); });
  }
  ASSIGN_OR_RETURN(chosen.fathom_remote, RemoteFathom::Join(remote_options));
  std::fprintf(stderr, "joined a running Fathom cluster as %s; clients on %s\n", chosen.fathom_remote->Describe().c_str(),
               chosen.async_lanes ? "its node threads" : "application threads");
  RemoteFathom* remote = chosen.fathom_remote.get();
  chosen.make_backend = [remote] { return remote->NewBackend(); };
  chosen.server_memory = [remote] { return remote->ObjectMemory(); };
  chosen.lanes = remote;
  return absl::OkStatus();
}

// --backend=memcached|redis: the server given with --server, or one started here on a free port.
absl::Status ChooseCache(ChosenBackend& chosen) {
  std::string host = "127.0.0.1";
  int port = 0;
  if (const std::string server = absl::GetFlag(FLAGS_server); !server.empty()) {
    absl::StatusOr<control::HostPort> parsed = control::ParseHostPort(server, control::PortZero::kRefused);
    if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat("--server: ", parsed.status().message()));
    host = parsed->host;
    port = parsed->port;
  } else {
    ASSIGN_OR_RETURN(chosen.server_process,
                     chosen.name == "redis"
                         ? ServerProcess::StartRedis()
                         : ServerProcess::StartMemcached("/usr/bin/memcached",
                                                         absl::GetFlag(FLAGS_memcached_large_pages)));
    port = chosen.server_process->port();
    std::fprintf(stderr, "started %s on 127.0.0.1:%d (pid %d)\n", chosen.name.c_str(), port,
                 chosen.server_process->pid());
  }
  if (chosen.name == "redis") {
    chosen.make_backend = [host, port] { return std::make_unique<RedisBackend>(host, port); };
    auto probe = std::make_shared<RedisBackend>(host, port);
    chosen.server_memory = [probe] { return probe->MemoryUsed(); };
  } else {
    chosen.make_backend = [host, port] { return std::make_unique<MemcachedBackend>(host, port); };
    auto probe = std::make_shared<MemcachedBackend>(host, port);
    chosen.server_memory = [probe] { return probe->MemoryUsed(); };
  }
  return absl::OkStatus();
}

absl::StatusOr<ChosenBackend> ChooseBackend(const CoreWorkload& workload, const Phases& phases) {
  ChosenBackend chosen;
  chosen.name = absl::GetFlag(FLAGS_backend);
  if (chosen.name == "fathom") {
    RETURN_IF_ERROR(ChooseFathom(workload, phases, chosen));
  } else if (chosen.name == "memory") {
    chosen.memory_store = std::make_unique<MemoryStore>();
    MemoryStore* store = chosen.memory_store.get();
    chosen.make_backend = [store] { return std::make_unique<MemoryBackend>(store); };
  } else if (chosen.name == "memcached" || chosen.name == "redis") {
    RETURN_IF_ERROR(ChooseCache(chosen));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--backend=", chosen.name, ": want memcached, redis, memory or fathom"));
  }
  return chosen;
}

// The servers whose CPU the report counts: the ones named, and one this process started.
absl::StatusOr<std::vector<pid_t>> ServerPids(const ChosenBackend& chosen) {
  ASSIGN_OR_RETURN(std::vector<pid_t> server_pids, ParsePidList(absl::GetFlag(FLAGS_server_pids)));
  if (chosen.fathom_cluster != nullptr && !server_pids.empty()) {
    return absl::InvalidArgumentError("--server_pids: an embedded cluster's servers are this process (its CPU is counted)");
  }
  if (chosen.server_process != nullptr) server_pids.push_back(chosen.server_process->pid());
  if (absl::StatusOr<double> cpu = ProcessesCpuSeconds(server_pids); !cpu.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--server_pids: ", cpu.status().message()));
  }
  return server_pids;
}

absl::StatusOr<RunOptions> RunOptionsFromFlags(const Properties& props) {
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  if (seed == 0) seed = static_cast<uint64_t>(absl::ToUnixNanos(absl::Now())) | 1;
  std::fprintf(stderr, "seed %llu (replay with --seed=%llu)\n", static_cast<unsigned long long>(seed),
               static_cast<unsigned long long>(seed));
  RunOptions options;
  options.threads = absl::GetFlag(FLAGS_threads);
  options.target_ops_per_sec = absl::GetFlag(FLAGS_target);
  options.warmup_ops = absl::GetFlag(FLAGS_warmup_ops);
  options.status_interval = absl::Seconds(std::max(1, absl::GetFlag(FLAGS_status_interval_s)));
  options.timeline.path = absl::GetFlag(FLAGS_timeline_out);
  options.timeline.interval = absl::Milliseconds(std::max(1, absl::GetFlag(FLAGS_timeline_ms)));
  options.seed = seed;
  if (const std::string max = props.GetString("maxexecutiontime", ""); !max.empty()) {
    int64_t seconds = 0;
    if (!absl::SimpleAtoi(max, &seconds) || seconds <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("maxexecutiontime=", max, ": want a positive number of seconds"));
    }
    options.max_execution_time = absl::Seconds(seconds);
  }
  if (options.threads < 1) return absl::InvalidArgumentError("--threads must be at least 1");
  return options;
}

// Load and run, each measured (operations, the servers' and the driver's CPU, the servers' memory) and
// reported on stdout in YCSB's format as it ends.
absl::StatusOr<std::vector<PhaseResult>> RunPhases(CoreWorkload& workload, ChosenBackend& chosen, const Phases& phases,
                                                   RunOptions options, const std::vector<pid_t>& server_pids,
                                                   const std::string& workload_path) {
  const WorkloadConfig& config = workload.config();
  std::vector<PhaseResult> results;
  for (Phase phase : {Phase::kLoad, Phase::kRun}) {
    if ((phase == Phase::kLoad && !phases.load) || (phase == Phase::kRun && !phases.run)) continue;
    options.phase = phase;
    // CPU: the servers' (an embedded cluster's server is this process), and ours.
    const double driver_cpu_before = SelfCpuSeconds();
    const absl::StatusOr<double> server_cpu_before = ProcessesCpuSeconds(server_pids);
    ASSIGN_OR_RETURN(PhaseResult result, chosen.async_lanes ? RunPhaseAsync(workload, *chosen.lanes, options)
                                                            : RunPhase(workload, chosen.make_backend, options));
    result.driver_cpu_seconds = SelfCpuSeconds() - driver_cpu_before;
    if (chosen.fathom_cluster != nullptr) result.server_cpu_seconds = result.driver_cpu_seconds;
    if (!server_pids.empty()) {
      const absl::StatusOr<double> after = ProcessesCpuSeconds(server_pids);
      if (after.ok() && server_cpu_before.ok()) {
        result.server_cpu_seconds = *after - *server_cpu_before;
      } else {  // a server ended during the phase (a fault run): its CPU is unknown, not zero
        std::fprintf(stderr, "server CPU not measured: %s\n",
                     std::string((after.ok() ? server_cpu_before : after).status().message()).c_str());
      }
    }
    if (chosen.server_memory) {
      if (absl::StatusOr<ServerMemory> memory = chosen.server_memory(); memory.ok()) {
        result.server_memory_bytes = static_cast<int64_t>(memory->taken);
        result.server_allocated_bytes = memory->allocated;
      } else {
        std::fprintf(stderr, "server memory not measured: %s\n", std::string(memory.status().message()).c_str());
      }
    }
    std::cout << "# " << result.phase << " phase: backend=" << chosen.name
              << (chosen.name == "fathom" ? absl::StrCat(" fabric=", absl::GetFlag(FLAGS_fathom_fabric),
                                                         " clients=", absl::GetFlag(FLAGS_fathom_clients))
                                          : std::string())
              << " workload=" << workload_path.substr(workload_path.rfind('/') + 1)
              << " threads=" << options.threads << " recordcount=" << config.record_count
              << " operationcount=" << config.operation_count << "\n"
              << FormatYcsbText(result);
    // What went wrong, with counts: the driver exits non-zero when any operation ended in error.
    for (const auto& [what, count] : result.measurements.errors()) {
      std::cout << "[ERRORS], " << count << ", " << what << "\n";
    }
    for (const auto& [what, count] : result.measurements.not_found()) {
      std::cout << "[NOT-FOUND], " << count << ", " << what << "\n";
    }
    std::cout << FormatSummary(result);
    std::cout << std::flush;
    results.push_back(std::move(result));
  }
  return results;
}

// The bank: transfers must have conserved the total (checked after a run, and by verify).
absl::StatusOr<std::optional<int64_t>> BankTotal(CoreWorkload& workload, const ChosenBackend& chosen,
                                                 const Phases& phases) {
  if (!(phases.run || phases.verify) || workload.config().transfer_proportion <= 0) return std::nullopt;
  std::unique_ptr<Backend> checker = chosen.make_backend();
  RETURN_IF_ERROR(checker->Init());
  ASSIGN_OR_RETURN(int64_t total, workload.SumBalances(*checker));
  checker->Cleanup().IgnoreError();
  std::cout << "[BANK], Total, " << total << "\n[BANK], ExpectedTotal, " << workload.ExpectedTotal() << "\n"
            << std::flush;
  return total;
}

absl::Status WriteJsonReport(const std::string& path, const CoreWorkload& workload, const Properties& props,
                             const ChosenBackend& chosen, const RunOptions& options,
                             const std::vector<pid_t>& server_pids, const std::string& workload_path,
                             std::optional<int64_t> bank_total, const std::vector<PhaseResult>& results) {
  std::vector<std::pair<std::string, std::string>> config_entries = {
      {"backend", chosen.name},
      {"fathom_fabric", absl::GetFlag(FLAGS_fathom_fabric)},
      {"fathom_clients", absl::GetFlag(FLAGS_fathom_clients)},
      {"workload_file", workload_path},
      {"threads", std::to_string(options.threads)},
      {"target", absl::StrCat(options.target_ops_per_sec)},
      {"warmup_ops", std::to_string(options.warmup_ops)},
      {"server_pids", absl::StrJoin(server_pids, ",")},
      {"seed", std::to_string(options.seed)}};
  for (const auto& [key, value] : props.values()) config_entries.emplace_back(absl::StrCat("property.", key), value);
  if (bank_total.has_value()) {
    config_entries.emplace_back("bank_total", std::to_string(*bank_total));
    config_entries.emplace_back("bank_expected_total", std::to_string(workload.ExpectedTotal()));
  }
  std::ofstream out(path);
  out << FormatJson(config_entries, results);
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// Verify: every loaded record, read once.
absl::StatusOr<CoreWorkload::VerifyReport> VerifyRecords(CoreWorkload& workload, const ChosenBackend& chosen) {
  std::unique_ptr<Backend> reader = chosen.make_backend();
  RETURN_IF_ERROR(reader->Init());
  CoreWorkload::VerifyReport verified = workload.VerifyRecords(*reader);
  reader->Cleanup().IgnoreError();
  std::cout << "[VERIFY], Records, " << verified.records << "\n[VERIFY], Ok, " << verified.ok
            << "\n[VERIFY], Missing, " << verified.missing << "\n[VERIFY], Failed, " << verified.failed << "\n";
  for (const auto& [what, count] : verified.errors) std::cout << "[VERIFY-ERRORS], " << count << ", " << what << "\n";
  std::cout << std::flush;
  return verified;
}

// The exit status: a bank total off, a loaded record unreadable, or any operation in error fails the run.
absl::Status Outcome(const CoreWorkload& workload, std::optional<int64_t> bank_total,
                     const std::optional<CoreWorkload::VerifyReport>& verified, const std::vector<PhaseResult>& results) {
  if (bank_total.has_value() && *bank_total != workload.ExpectedTotal()) {
    return absl::DataLossError(absl::StrCat("bank total ", *bank_total, " after the run, expected ",
                                            workload.ExpectedTotal(), ": a transfer was not atomic"));
  }
  if (verified.has_value() && verified->ok != verified->records) {
    return absl::DataLossError(absl::StrCat(verified->records - verified->ok, " of ", verified->records,
                                            " loaded records could not be read (the [VERIFY] lines above say why)"));
  }
  uint64_t failed = 0;
  for (const PhaseResult& result : results) failed += result.measurements.error_count();
  if (failed > 0) {
    return absl::UnavailableError(
        absl::StrCat(failed, " operation(s) ended in error (the [ERRORS] lines above say which, with counts)"));
  }
  return absl::OkStatus();
}

absl::Status Main(int argc, char** argv) {
  ASSIGN_OR_RETURN(YcsbArgs ycsb_args, ExtractYcsbArgs(&argc, argv));
  absl::SetProgramUsageMessage("YCSB core workload driver; see bench/ycsb_main.cc");
  absl::ParseCommandLine(argc, argv);
  RETURN_IF_ERROR(fathom::FillFlagsFromClusterFile(absl::GetFlag(FLAGS_cluster_file),
                                                   {.tcp = "", .fabric = "fathom_fabric"}));

  // Properties: the workload file, then --props, then -p (later wins, as YCSB applies -p after -P).
  std::string workload_path = ycsb_args.properties_file;
  if (workload_path.empty()) workload_path = absl::GetFlag(FLAGS_workload_file);
  if (workload_path.empty()) workload_path = RunfilePath(absl::StrCat("bench/workloads/workload", absl::GetFlag(FLAGS_workload)));
  Properties props;
  RETURN_IF_ERROR(props.LoadFile(workload_path));
  for (absl::string_view assignment : absl::StrSplit(absl::GetFlag(FLAGS_props), ',', absl::SkipEmpty())) {
    RETURN_IF_ERROR(props.SetFromAssignment(std::string_view(assignment.data(), assignment.size())));
  }
  for (const std::string& assignment : ycsb_args.assignments) RETURN_IF_ERROR(props.SetFromAssignment(assignment));
  ASSIGN_OR_RETURN(std::unique_ptr<CoreWorkload> workload, CoreWorkload::Create(props));

  ASSIGN_OR_RETURN(const Phases phases, ChoosePhases(ycsb_args));
  ASSIGN_OR_RETURN(ChosenBackend chosen, ChooseBackend(*workload, phases));
  ASSIGN_OR_RETURN(const std::vector<pid_t> server_pids, ServerPids(chosen));
  ASSIGN_OR_RETURN(const RunOptions options, RunOptionsFromFlags(props));

  ASSIGN_OR_RETURN(const std::vector<PhaseResult> results,
                   RunPhases(*workload, chosen, phases, options, server_pids, workload_path));
  ASSIGN_OR_RETURN(const std::optional<int64_t> bank_total, BankTotal(*workload, chosen, phases));
  if (const std::string json_path = absl::GetFlag(FLAGS_json_out); !json_path.empty()) {
    RETURN_IF_ERROR(WriteJsonReport(json_path, *workload, props, chosen, options, server_pids, workload_path,
                                    bank_total, results));
  }
  std::optional<CoreWorkload::VerifyReport> verified;
  if (phases.verify) {
    ASSIGN_OR_RETURN(CoreWorkload::VerifyReport report, VerifyRecords(*workload, chosen));
    verified = std::move(report);
  }

  if (chosen.fathom_remote != nullptr) {
    const uint32_t id = chosen.fathom_remote->node_id();
    RETURN_IF_ERROR(chosen.fathom_remote->Leave());
    std::fprintf(stderr, "client-only node %u left the cluster\n", id);
  }
  return Outcome(*workload, bank_total, verified, results);
}

}  // namespace
}  // namespace fathom::ycsb

int main(int argc, char** argv) {
  const absl::Status status = fathom::ycsb::Main(argc, argv);
  if (!status.ok()) {
    std::fprintf(stderr, "ycsb: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
