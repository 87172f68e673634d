// Faults drawn from the seed, FoundationDB's way: each seed draws a cluster (3 members with f = 1, or 5
// with f = 2), up to f victims and what happens to each while the bank-and-KV workload runs — a crash, a
// pause (as SIGSTOP), ZooKeeper lost by that node alone (its session expires if that lasts), a network
// partition from everyone, slow ZooKeeper watches — and perhaps the whole ZooKeeper ensemble down for a
// while. Half the seeds keep every node's SSD log on the simulated disk (log epochs close), and a quarter
// of those fail every write to it for a while. (ZooKeeper expires only a session it has not heard from for its timeout, so an expiry comes with a
// cut: the ensemble ending a connected session at once, SimZooKeeperStore::Expire, is no fault drawn here.) Once
// every fault has ended (a crash is for good), the cluster must settle with every node still running a
// member again, money must be conserved, every acknowledged put read back, and every region's replicas
// identical; at no round may two running nodes hold the configuration manager's role.
//
// `bazel test //tests/sim:random_faults_test` runs 200 seeds; the `_nightly` variant 10,000. A failing
// seed prints its plan and replays exactly: --test_env=FATHOM_SEED=N (FATHOM_SIM_TRACE=1 for a trace).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/configuration.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "tests/sim/seeds.h"
#include "tests/sim/sim_cluster.h"
#include "tests/sim/sim_probes.h"
#include "tests/sim/sim_workload.h"

namespace fathom::sim {
namespace {

enum class FaultKind { kCrash, kPause, kZooKeeperCut, kPartition, kSlowWatches, kEnsembleDown, kDiskFailing };

std::string Name(FaultKind kind) {
  switch (kind) {
    case FaultKind::kCrash: return "crash";
    case FaultKind::kPause: return "pause";
    case FaultKind::kZooKeeperCut: return "ZooKeeper cut";
    case FaultKind::kPartition: return "partition";
    case FaultKind::kSlowWatches: return "slow watches";
    case FaultKind::kEnsembleDown: return "ensemble down";
    case FaultKind::kDiskFailing: return "every write to the disk failing";
  }
  return "?";
}

struct Fault {
  FaultKind kind;
  uint32_t node = 0;  // 0: the ensemble
  absl::Duration at;     // after the workload started
  absl::Duration lasts;  // for the faults that end
};

struct Plan {
  int nodes = 3;
  int backups = 1;
  bool ssd_log = false;  // every node logs to the simulated disk
  std::vector<Fault> faults;
  std::string Describe() const {
    std::vector<std::string> parts;
    for (const Fault& f : faults) {
      parts.push_back(absl::StrCat(Name(f.kind), f.node != 0 ? absl::StrCat(" of node ", f.node) : "", " at +",
                                   absl::FormatDuration(f.at),
                                   f.kind == FaultKind::kCrash ? "" : absl::StrCat(" for ", absl::FormatDuration(f.lasts))));
    }
    return absl::StrCat(nodes, " nodes, f=", backups, ssd_log ? ", SSD logs" : "", ": ", absl::StrJoin(parts, "; "));
  }
};

// The plan of `seed` (its own generator: the cluster's draws do not shift it).
Plan Draw(uint64_t seed, absl::Duration lease_period) {
  std::mt19937_64 random(seed * 0x2545f4914f6cdd1dULL + 0x5eed);
  auto uniform = [&](absl::Duration low, absl::Duration high) {
    return low + (high - low) * std::uniform_real_distribution<double>(0, 1)(random);
  };
  Plan plan;
  plan.backups = random() % 2 == 0 ? 1 : 2;
  plan.nodes = 2 * plan.backups + 1;
  std::vector<uint32_t> nodes;
  for (int i = 1; i <= plan.nodes; ++i) nodes.push_back(static_cast<uint32_t>(i));
  std::shuffle(nodes.begin(), nodes.end(), random);
  const int victims = 1 + static_cast<int>(random() % plan.backups);
  for (int v = 0; v < victims; ++v) {
    Fault fault;
    fault.kind = static_cast<FaultKind>(random() % 5);  // a node's fault (not kEnsembleDown)
    fault.node = nodes[v];
    fault.at = uniform(absl::ZeroDuration(), 3 * lease_period);
    fault.lasts = uniform(lease_period / 4, 15 * lease_period);
    plan.faults.push_back(fault);
  }
  if (random() % 4 == 0) {
    plan.faults.push_back({FaultKind::kEnsembleDown, 0, uniform(absl::ZeroDuration(), 3 * lease_period),
                           uniform(lease_period, 20 * lease_period)});
  }
  // Drawn last, so the plans drawn before the log was simulated stay as they were.
  plan.ssd_log = random() % 2 == 0;
  if (plan.ssd_log && random() % 4 == 0) {
    plan.faults.push_back({FaultKind::kDiskFailing, 0, uniform(absl::ZeroDuration(), 3 * lease_period),
                           uniform(lease_period, 20 * lease_period)});
  }
  return plan;
}

// Starts and ends the plan's faults at their times, as a task of the scheduler.
class Injector {
 public:
  Injector(SimCluster* cluster, const Plan& plan) : cluster_(cluster) {
    const absl::Time start = cluster->network().clock().Now();
    for (const Fault& f : plan.faults) Schedule(start, f);
    std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) { return a.at < b.at; });
    task_ = cluster->scheduler().AddTask(0, [this] { return Step(); });
  }
  ~Injector() { cluster_->scheduler().RemoveTask(task_); }
  bool done() const { return next_ == events_.size(); }

 private:
  struct Event {
    absl::Time at;
    std::function<void()> act;
  };
  void Schedule(absl::Time start, const Fault& f) {
    SimCluster* c = cluster_;
    const uint32_t n = f.node;
    const absl::Time begins = start + f.at;
    const absl::Time ends = begins + f.lasts;
    switch (f.kind) {
      case FaultKind::kCrash:
        events_.push_back({begins, [c, n] { c->Stop(n); }});
        break;
      case FaultKind::kPause:
        events_.push_back({begins, [c, n] { c->Pause(n); }});
        events_.push_back({ends, [c, n] { c->Resume(n); }});
        break;
      case FaultKind::kZooKeeperCut:
        events_.push_back({begins, [c, n] { c->zookeeper().CutOff(n); }});
        events_.push_back({ends, [c, n] { c->zookeeper().Reconnect(n); }});
        break;
      case FaultKind::kPartition:
        events_.push_back({begins, [c, n, lasts = f.lasts] {
                             for (int i = 1; i <= c->size(); ++i) {
                               if (static_cast<uint32_t>(i) != n) c->network().Partition(n, i, lasts);
                             }
                           }});
        events_.push_back({ends, [] {}});  // healed by the network; the event marks when
        break;
      case FaultKind::kSlowWatches:
        events_.push_back({begins, [c, n] { c->HoldConfigurations(n, true); }});
        events_.push_back({ends, [c, n] { c->HoldConfigurations(n, false); }});
        break;
      case FaultKind::kEnsembleDown:
        events_.push_back({begins, [c] { c->zookeeper().GoDown(); }});
        events_.push_back({ends, [c] { c->zookeeper().ComeUp(); }});
        break;
      case FaultKind::kDiskFailing:
        events_.push_back({begins, [c] { c->disk().set_failing(true); }});
        events_.push_back({ends, [c] { c->disk().set_failing(false); }});
        break;
    }
  }
  size_t Step() {
    size_t acted = 0;
    const absl::Time now = cluster_->network().clock().Now();
    while (next_ < events_.size() && events_[next_].at <= now) {
      events_[next_++].act();
      ++acted;
    }
    return acted;
  }

  SimCluster* const cluster_;
  std::vector<Event> events_;
  size_t next_ = 0;
  uint64_t task_ = 0;
};

TEST(RandomFaultsTest, TheWorkloadsInvariantsHoldUnderTheSeedsFaults) {
  for (uint64_t seed : Seeds()) {
    SimClusterOptions options;
    options.seed = seed;
    const Plan plan = Draw(seed, options.lease_period);
    SCOPED_TRACE(absl::StrCat(Replay(seed), ": ", plan.Describe()));
    options.nodes = plan.nodes;
    options.backups = plan.backups;
    options.ssd_log = plan.ssd_log;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SimCluster> cluster, SimCluster::Start(options));
    cluster->Record(plan.Describe());
    std::vector<uint32_t> crashed;
    SimWorkloadOptions workload;
    workload.transfers_per_thread = 8;
    workload.kv_keys = 4;
    for (const Fault& f : plan.faults) {
      if (f.kind == FaultKind::kCrash) crashed.push_back(f.node);
    }
    // Through a node no fault touches.
    for (int i = 1; i <= plan.nodes && workload.through == 0; ++i) {
      const uint32_t id = static_cast<uint32_t>(i);
      if (std::none_of(plan.faults.begin(), plan.faults.end(), [id](const Fault& f) { return f.node == id; })) {
        workload.through = id;
      }
    }
    std::unique_ptr<Injector> injector;
    absl::Status healed = absl::OkStatus();
    workload.on_started = [&] { injector = std::make_unique<Injector>(cluster.get(), plan); };
    workload.before_audit = [&] {
      // Every fault has ended; every node still running is a member again, and the cluster settled.
      healed = RunUntilSettled(*cluster, absl::Seconds(30), [&] {
        if (!injector->done()) return false;
        const coordinator::Configuration now = cluster->configuration();
        for (int i = 1; i <= cluster->size(); ++i) {
          const uint32_t id = static_cast<uint32_t>(i);
          const bool listed = coordinator::FindMember(now, id) != nullptr;
          if (listed == cluster->stopped(id)) return false;
        }
        return true;
      });
    };
    absl::StatusOr<SimWorkloadResult> result = RunSimWorkload(*cluster, workload, seed);
    ASSERT_EQ(healed, absl::OkStatus()) << "the cluster did not come back after the faults: " << Unsettled(*cluster);
    ASSERT_OK(result.status());
    EXPECT_EQ(result->audit_blocked, "");
    EXPECT_TRUE(result->violations.empty()) << absl::StrJoin(result->violations, "\n");
    EXPECT_EQ(IdenticalReplicasOnceSettled(*cluster), absl::OkStatus());
    injector.reset();
    if (::testing::Test::HasFailure()) return;  // the first failing seed is the one to read
  }
}

}  // namespace
}  // namespace fathom::sim
