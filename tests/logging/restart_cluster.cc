#include "tests/logging/restart_cluster.h"

#include <signal.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/util/fathomd_process.h"

namespace fathom::testing {

std::string RestartCluster::data_dir(int node) const { return absl::StrCat(root_, "/node", node); }

std::vector<std::string> RestartCluster::Flags(int node) const {
  std::vector<std::string> flags = {absl::StrCat("--token=", kToken),
                                    "--memory=16M",
                                    "--region_size=16M",
                                    "--threads=2",
                                    "--transports=sm",
                                    "--backups=1",
                                    "--txn_members=1,2,3",
                                    absl::StrCat("--data_dir=", data_dir(node))};
  auto own = addresses_.find(node);
  flags.push_back(absl::StrCat("--listen=", own == addresses_.end() ? "127.0.0.1:0" : own->second));
  std::string peers;
  for (const auto& [id, address] : addresses_) {
    if (id != node) peers += absl::StrCat(peers.empty() ? "" : ",", id, "@", address);
  }
  if (!peers.empty()) flags.push_back("--peers=" + peers);
  return flags;
}

absl::StatusOr<std::unique_ptr<RestartCluster>> RestartCluster::Start(const std::string& root) {
  auto cluster = std::unique_ptr<RestartCluster>(new RestartCluster());
  cluster->root_ = root;
  for (int id = 1; id <= kNodes; ++id) {
    auto started = StartFathomd(id, cluster->Flags(id));
    if (!started.ok()) return started.status();
    cluster->addresses_[id] = started->control_address;
    cluster->processes_[id] = std::move(started->process);
  }
  if (absl::Status s = cluster->StartClient(); !s.ok()) return s;
  return cluster;
}

RestartCluster::~RestartCluster() {
  StopClient();
  processes_.clear();  // SIGKILLs what is left
}

void RestartCluster::StopClient() { client_.reset(); }

absl::Status RestartCluster::StartClient() {
  // Records carry the epoch; participants refuse any other than theirs.
  auto counters = Counters(1);
  if (!counters.ok()) return counters.status();
  epoch_ = counters->at("txn.epoch");
  server::ServerOptions options;
  options.node.node_id = kNodes + 1;
  options.node.cluster_token = kToken;
  options.node.memory_bytes = 4 << 20;
  options.node.region_bytes = 4 << 20;
  options.node.worker_threads = 2;
  for (const auto& [id, address] : addresses_) options.node.peers.push_back({static_cast<uint32_t>(id), address});
  options.transports = "sm";
  options.client_only = true;
  options.txn_members = data_nodes_;
  options.configuration_epoch = epoch_;
  // A client of the log epochs: its sync transactions learn from the driver when they are durable.
  options.transactions.epoch_log = txn::EpochLog::ForClient();
  options.transactions.start_log_epochs = false;  // never the driver
  auto client = server::Server::Start(std::move(options));
  if (!client.ok()) return client.status();
  client_ = std::move(*client);
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, uint64_t>> RestartCluster::Counters(int node) {
  auto client = ConnectControl(addresses_.at(node), kToken);
  if (!client.ok()) return client.status();
  auto stats = (*client)->Stats();
  if (!stats.ok()) return stats.status();
  return std::map<std::string, uint64_t>(stats->counters().begin(), stats->counters().end());
}

absl::StatusOr<std::map<int, uint64_t>> RestartCluster::WaitForLogsCaughtUp(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::map<int, uint64_t> last_enqueued;
  int quiet_rounds = 0;
  while (absl::Now() < deadline) {
    auto stats = client_->transactions().Stats();
    if (!stats.ok()) return stats.status();
    std::map<int, uint64_t> enqueued, persisted;
    bool behind = stats->truncations_owed > 0;
    for (int id = 1; id <= kNodes; ++id) {
      auto counters = Counters(id);
      if (!counters.ok()) return counters.status();
      enqueued[id] = counters->at("log.enqueued_position");
      persisted[id] = counters->at("log.persisted_position");
      behind |= persisted[id] < enqueued[id] || counters->at("log.lag_records") != 0;
    }
    quiet_rounds = !behind && enqueued == last_enqueued ? quiet_rounds + 1 : 0;
    if (quiet_rounds >= 3) return persisted;
    last_enqueued = enqueued;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return absl::DeadlineExceededError("the logs did not catch up");
}

void RestartCluster::KillAll() {
  for (auto& [id, process] : processes_) process->Signal(SIGKILL);
  for (auto& [id, process] : processes_) process->Wait(absl::Seconds(10)).IgnoreError();
  processes_.clear();
}

absl::Status RestartCluster::Restart() {
  StopClient();
  std::map<int, std::unique_ptr<Subprocess>> launched;
  for (int id = 1; id <= kNodes; ++id) {
    auto process = LaunchFathomd(id, Flags(id));
    if (!process.ok()) return process.status();
    launched[id] = std::move(*process);
  }
  for (int id = 1; id <= kNodes; ++id) {
    auto ready = WaitForReady(id, std::move(launched[id]));
    if (!ready.ok()) return ready.status();
    processes_[id] = std::move(ready->process);
  }
  return StartClient();
}

}  // namespace fathom::testing
