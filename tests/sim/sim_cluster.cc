#include "tests/sim/sim_cluster.h"

#include <xxhash.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "coordinator/zookeeper_client.h"

namespace fathom::sim {
namespace {

constexpr char kToken[] = "sim-cluster-token-0123456789abcdef";

}  // namespace

SimCluster::SimCluster(const SimClusterOptions& options) : options_(options) {}

SimCluster::~SimCluster() {
  // Servers stop (leaving the configuration, their threads and tasks removed) while the scheduler, the
  // network and the ensemble still exist.
  for (auto it = servers_.rbegin(); it != servers_.rend(); ++it) {
    if (*it != nullptr) (*it)->Stop();
  }
  servers_.clear();
}

absl::StatusOr<std::unique_ptr<SimCluster>> SimCluster::Start(const SimClusterOptions& options) {
  if (options.nodes < 1 || options.threads_per_node < 1 || options.backups < 0) {
    return absl::InvalidArgumentError("a simulated cluster needs nodes, threads and f >= 0");
  }
  std::unique_ptr<SimCluster> cluster(new SimCluster(options));
  fabric::sim::SimOptions sim;
  sim.seed = options.seed;
  sim.min_latency = options.min_latency;
  sim.max_latency = options.max_latency;
  sim.drop_probability = 0;  // options.drop_probability once the cluster has settled
  sim.torn_copies = options.torn_copies;
  sim.idle_polls_jump_ahead = false;  // time moves by the scheduler's rounds: lease ticks keep their pace
  sim.trace_history = options.trace_history || std::getenv("FATHOM_SIM_TRACE") != nullptr;
  cluster->trace_ = sim.trace_history;
  cluster->network_ = std::make_unique<fabric::sim::SimNetwork>(sim);
  SimZooKeeperStore::Options zookeeper;
  zookeeper.tick = options.lease_period / 2;
  cluster->zookeeper_ = std::make_unique<SimZooKeeperStore>(&cluster->network_->clock(), zookeeper);
  cluster->disk_ = std::make_unique<SimDisk>();
  // The scheduler's order comes from the seed too, but not from the fabric's generator: a change in how
  // often one draws does not shift the other.
  cluster->scheduler_ = std::make_unique<SimScheduler>(cluster->network_.get(), options.seed * 0x9e3779b97f4a7c15ULL + 1);
  // The ensemble's expiries and events.
  cluster->scheduler_->AddTask(0, [store = cluster->zookeeper_.get()] { return store->Deliver(); });
  // In id order: node 1 is elected CM, and places each member's regions as it joins.
  for (int i = 1; i <= options.nodes; ++i) {
    if (absl::Status started = cluster->StartServer(static_cast<uint32_t>(i)); !started.ok()) return started;
  }
  // Settled: every member's follower applied (and fenced) the last configuration.
  SimCluster* raw = cluster.get();
  const bool settled = cluster->scheduler_->RunUntil(
      [raw] {
        const uint64_t epoch = raw->configuration().epoch();
        for (int i = 1; i <= raw->size(); ++i) {
          if (raw->applied_epoch(static_cast<uint32_t>(i)) < epoch) return false;
        }
        return true;
      },
      absl::Seconds(30));
  if (!settled) return absl::DeadlineExceededError("the simulated cluster did not settle on one configuration");
  cluster->network_->set_drop_probability(options.drop_probability);
  return cluster;
}

absl::Status SimCluster::StartServer(uint32_t id) {
  auto fabric = network_->AddNode(id);
  if (!fabric.ok()) return fabric.status();
  server::ServerOptions server;
  node::NodeOptions& node = server.node;
  node.node_id = id;
  node.cluster_name = "sim";
  node.cluster_token = kToken;
  node.memory_bytes = 4 << 20;
  node.region_bytes = 4 << 20;
  node.worker_threads = options_.threads_per_node;
  node.ring_bytes = 16 << 10;
  node.clock = &network_->clock();
  node.executor = scheduler_.get();
  node.in_process_peers = &in_process_peers_;
  node.incarnation = options_.seed * 1000 + id;  // what a real process draws at random
  node.call_timeout = absl::Seconds(10);         // virtual time, as every timeout here
  node.join_timeout = absl::Seconds(30);
  server.fabric = std::move(*fabric);
  server.fabric_kind = coordinator::FABRIC_KIND_SIM;
  server.zookeeper = "simulated-ensemble";
  server.zookeeper_store = zookeeper_.get();
  server.zookeeper_session_timeout = options_.zookeeper_session_timeout > absl::ZeroDuration()
                                         ? options_.zookeeper_session_timeout
                                         : 10 * options_.lease_period;
  server.lease_period = options_.lease_period;
  server.lease_channel = false;
  if (options_.ssd_log) {
    server.data_dir = DataDirOf(id);
    server.log_env = disk_->env();
    server.log_fsync = options_.log_fsync;
  }
  server.transactions.backups = options_.backups;
  server.transactions.fill_bytes_per_second = options_.fill_bytes_per_second;
  server.transactions.resend_interval = options_.resend_interval;
  if (options_.on_step) {
    server.transactions.on_step = [id, hook = options_.on_step](std::string_view step) { hook(id, step); };
  }
  server.log_line = [this, id](const std::string& line) {
    const std::string event = absl::StrCat("node ", id, ": ", line);
    Record(event);
    // With the fabric's trace (FATHOM_SIM_TRACE), the servers' progress lines too, at virtual time.
    if (trace_) std::fprintf(stderr, "[sim %s] %s\n", absl::FormatTime(network_->clock().Now()).c_str(), event.c_str());
  };
  auto started = server::Server::Start(std::move(server));
  if (!started.ok()) return started.status();
  servers_.push_back(std::move(*started));
  return absl::OkStatus();
}

void SimCluster::Stop(uint32_t id) {
  stopped_.insert(id);
  Freeze(id, true);
  node::Node& stopped = node(id);
  in_process_peers_.Remove(stopped.control_address(), &stopped);
  network_->Crash(id);
  zookeeper_->CutOff(id);  // a dead process pings no more
}

absl::Status SimCluster::PowerLoss(uint32_t id) {
  Stop(id);
  return disk_->LoseUnsyncedUnder(DataDirOf(id));
}

std::string SimCluster::DataDirOf(uint32_t id) { return absl::StrCat("/sim/node", id); }

void SimCluster::Freeze(uint32_t id, bool frozen) {
  node::Node& n = node(id);
  for (int t = 0; t < n.threads(); ++t) {
    absl::StatusOr<node::NodeThread*> thread = n.Thread(t);
    if (!thread.ok()) continue;
    if (frozen) {
      scheduler_->Freeze(*thread);
    } else {
      scheduler_->Resume(*thread);
    }
  }
  if (frozen) {
    scheduler_->FreezeTasks(id);
  } else {
    scheduler_->ResumeTasks(id);
  }
}

void SimCluster::Pause(uint32_t id) {
  paused_.insert(id);
  Freeze(id, true);
  zookeeper_->CutOff(id);
}

void SimCluster::Resume(uint32_t id) {
  paused_.erase(id);
  Freeze(id, false);
  zookeeper_->Reconnect(id);
}

void SimCluster::HoldConfigurations(uint32_t id, bool hold) { zookeeper_->HoldEvents(id, hold); }

coordinator::Configuration SimCluster::configuration() const {
  absl::StatusOr<std::string> bytes = zookeeper_->Peek(coordinator::ClusterZnodes("sim").config);
  if (!bytes.ok()) return coordinator::Configuration();
  absl::StatusOr<coordinator::Configuration> decoded = coordinator::DecodeConfiguration(*bytes);
  return decoded.ok() ? *std::move(decoded) : coordinator::Configuration();
}

uint64_t SimCluster::applied_epoch(uint32_t id) {
  const coordinator::MembershipFollower* follower = server(id).follower();
  return follower == nullptr ? 0 : follower->applied_epoch();
}

absl::Status SimCluster::Leave(uint32_t id) {
  if (id < 1 || id > servers_.size()) return absl::NotFoundError(absl::StrCat("no node ", id));
  return server(id).coordinator()->Leave();
}

void SimCluster::Record(std::string_view event) {
  events_digest_ = XXH64(event.data(), event.size(), events_digest_);
}

uint64_t SimCluster::history() const {
  const uint64_t fabric = network_->stats().history_digest;
  return XXH64(&fabric, sizeof(fabric), events_digest_);
}

}  // namespace fathom::sim
