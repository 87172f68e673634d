// The replayable simulation: a three-node cluster with transactions and a KV table on SimFabric, run on
// one thread from a seed. The same seed twice gives the same history (every fabric operation, so every
// message, and every workload outcome); faults (drops, and a node stopped at a named commit step) are part
// of what replays. A failing seed is printed; run it alone with --test_env=FATHOM_SEED=N.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/configuration.h"
#include "platform/memory/global_address.h"
#include "gtest/gtest.h"
#include "tests/sim/seeds.h"
#include "tests/sim/sim_cluster.h"
#include "tests/sim/sim_workload.h"

namespace fathom::sim {
namespace {

struct SimRun {
  uint64_t history = 0;
  SimWorkloadResult result;
  uint64_t fabric_operations = 0;
};

absl::StatusOr<SimRun> RunOnce(SimClusterOptions options, const SimWorkloadOptions& workload) {
  auto cluster = SimCluster::Start(options);
  if (!cluster.ok()) return cluster.status();
  auto result = RunSimWorkload(**cluster, workload, options.seed);
  if (!result.ok()) return result.status();
  return SimRun{(*cluster)->history(), *result, (*cluster)->network().stats().completed};
}

TEST(SimDeterminismTest, TheSameSeedGivesTheSameHistory) {
  std::vector<uint64_t> histories;
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    SimClusterOptions options;
    options.seed = seed;
    SimWorkloadOptions workload;
    absl::StatusOr<SimRun> first = RunOnce(options, workload);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<SimRun> second = RunOnce(options, workload);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_EQ(first->fabric_operations, second->fabric_operations);
    EXPECT_TRUE(first->result.violations.empty()) << first->result.violations.front();
    EXPECT_GT(first->result.committed, 0u);
    EXPECT_GT(first->fabric_operations, 1000u);
    std::cerr << "[ info ] " << Replay(seed) << ": " << first->fabric_operations << " fabric operations, "
              << first->result.committed << " transfers committed, history " << std::hex << first->history
              << std::dec << "\n";
    histories.push_back(first->history);
  }
  // Different seeds schedule differently: the digest sees it.
  for (size_t i = 1; i < histories.size(); ++i) EXPECT_NE(histories[i], histories[0]);
}

TEST(SimDeterminismTest, DroppedOperationsReplayToo) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    SimClusterOptions options;
    options.seed = seed;
    options.drop_probability = 0.005;
    SimWorkloadOptions workload;
    workload.transfers_per_thread = 10;
    workload.kv_keys = 8;
    absl::StatusOr<SimRun> first = RunOnce(options, workload);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<SimRun> second = RunOnce(options, workload);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_TRUE(first->result.violations.empty()) << first->result.violations.front();
  }
}

// Node 3 stops the moment a commit it coordinates reaches COMMIT-PRIMARY (its backups hold the records,
// no primary has been told). The rest of the cluster goes on with what does not need node 3 — accounts
// on node 1, whose backup is node 2 — and the whole run, stop included, replays.
TEST(SimDeterminismTest, ANodeStoppedAtACommitStepReplays) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    auto run = [seed]() -> absl::StatusOr<std::pair<SimRun, bool>> {
      SimCluster* raw = nullptr;
      bool stopped = false;
      SimClusterOptions options;
      options.seed = seed;
      options.on_step = [&](uint32_t node, std::string_view step) {
        if (node == 3 && step == "commit_primary" && !stopped) {
          stopped = true;
          raw->Stop(3);
        }
      };
      auto cluster = SimCluster::Start(options);
      if (!cluster.ok()) return cluster.status();
      raw = cluster->get();
      // Node 3 coordinates transfers between node-1 accounts until it is stopped; nodes 1 and 2 keep
      // transferring between the same accounts.
      SimWorkloadOptions workload;
      workload.account_nodes = {1};
      workload.kv_keys = 0;
      workload.transfers_per_thread = 6;
      auto result = RunSimWorkload(**cluster, workload, seed);
      if (!result.ok()) return result.status();
      return std::make_pair(SimRun{(*cluster)->history(), *result, (*cluster)->network().stats().completed}, stopped);
    };
    absl::StatusOr<std::pair<SimRun, bool>> first = run();
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<std::pair<SimRun, bool>> second = run();
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_TRUE(first->second) << "node 3 never reached COMMIT-PRIMARY";
    EXPECT_EQ(first->first.history, second->first.history) << "the runs diverged";
    EXPECT_GT(first->first.result.committed, 0u);
    // Without recovery the stopped coordinator's locks stay: what issue "Recovery" is to fix (then the
    // audit must pass here).
    std::cerr << "[ info ] " << Replay(seed) << ": " << first->first.result.committed << " transfers committed, "
              << first->first.result.failed << " failed; audit: "
              << (first->first.result.audit_blocked.empty() ? "ran" : first->first.result.audit_blocked) << "\n";
  }
}


// A member whose lease lapses is removed and its regions promoted. Node 3 crashes; its lease lapses and
// the CM (node 1) removes it from the configuration; nodes 1 and 2 apply the change. Node 3's regions get
// their backup as primary, which serves the committed data; a region with a replica on node 3 gets the
// other node as a new backup, filled by its primary, and takes writes again; regions held by nodes 1 and
// 2 go on as before. All of it replays.
TEST(SimDeterminismTest, AMemberWhoseLeaseLapsesIsRemovedAndItsRegionsPromoted) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    auto run = [seed]() -> absl::StatusOr<SimRun> {
      SimClusterOptions options;
      options.seed = seed;
      auto started = SimCluster::Start(options);
      if (!started.ok()) return started.status();
      SimCluster& cluster = **started;
      const coordinator::Configuration before = cluster.configuration();
      for (const coordinator::RegionPlacement& r : before.regions()) {
        if (memory::OwnerOfRegion(r.region_id()) != 1) continue;
        EXPECT_NE(r.backups(0), 3u) << "the test needs node 1's regions held by nodes 1 and 2";
      }
      // An object in node 3's memory, committed while node 3 is a member.
      txn::Transaction setup = cluster.txns(1).Begin();
      auto on_three = setup.Alloc(16, txn::AllocHint{.node = 3});
      if (!on_three.ok()) return on_three.status();
      if (absl::Status s = setup.Write(*on_three, "before"); !s.ok()) return s;
      if (absl::Status s = setup.Commit(); !s.ok()) return s;

      cluster.Stop(3);
      const bool applied = cluster.scheduler().RunUntil(
          [&] { return cluster.applied_epoch(1) > before.epoch() && cluster.applied_epoch(2) > before.epoch(); },
          absl::Seconds(10));
      EXPECT_TRUE(applied) << "node 3 was never removed";
      EXPECT_EQ(cluster.lease(1).counters().expiries, 1u);
      cluster.Record(absl::StrCat("removed at ", absl::FormatTime(cluster.network().clock().Now())));
      const coordinator::Configuration after = cluster.configuration();
      EXPECT_EQ(after.epoch(), before.epoch() + 1);
      EXPECT_EQ(coordinator::DataMemberIds(after), (std::vector<uint32_t>{1, 2}));
      EXPECT_EQ(after.regions_size(), before.regions_size());
      for (int i = 0; i < before.regions_size() && i < after.regions_size(); ++i) {
        const coordinator::RegionPlacement& was = before.regions(i);
        const coordinator::RegionPlacement& now = after.regions(i);
        if (was.primary() == 3) {
          EXPECT_EQ(now.primary(), was.backups(0)) << "region " << was.region_id() << ": its backup is promoted";
        } else {
          EXPECT_EQ(now.primary(), was.primary()) << "region " << was.region_id() << " moved";
        }
        for (uint32_t b : now.backups()) EXPECT_NE(b, 3u);
        EXPECT_EQ(now.backups_size(), 1) << "region " << was.region_id() << " has no backup";
      }
      const uint32_t promoted = coordinator::FindRegion(after, on_three->address.region)->primary();
      const bool serving = cluster.scheduler().RunUntil(
          [&] { return cluster.node(promoted).Serves(on_three->address.region); }, absl::Seconds(10));
      EXPECT_TRUE(serving) << "node " << promoted << " never served node 3's region";
      txn::Transaction read = cluster.txns(1).Begin();
      absl::StatusOr<std::string> value = read.Read(*on_three);
      EXPECT_TRUE(value.ok() && *value == "before") << (value.ok() ? *value : value.status().ToString());
      txn::Transaction write = cluster.txns(1).Begin();
      absl::Status written = write.Write(*on_three, "after");
      if (written.ok()) written = write.Commit();
      EXPECT_TRUE(written.ok()) << written;
      cluster.Record(absl::StrCat("write to node 3's region: ", written.ToString()));
      const bool filled = cluster.scheduler().RunUntil(
          [&] {
            const coordinator::Configuration now = cluster.configuration();
            for (const coordinator::RegionPlacement& r : now.regions()) {
              if (r.filling_size() > 0) return false;
            }
            return true;
          },
          absl::Seconds(10));
      EXPECT_TRUE(filled) << "a new backup was never filled";

      SimWorkloadOptions workload;
      workload.account_nodes = {1};
      workload.idle_nodes = {3};
      workload.kv_keys = 0;
      workload.transfers_per_thread = 6;
      auto result = RunSimWorkload(cluster, workload, seed);
      if (!result.ok()) return result.status();
      return SimRun{cluster.history(), *result, cluster.network().stats().completed};
    };
    absl::StatusOr<SimRun> first = run();
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<SimRun> second = run();
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_GT(first->result.committed, 0u);
    EXPECT_EQ(first->result.failed, 0u);
    EXPECT_TRUE(first->result.audit_blocked.empty()) << first->result.audit_blocked;
    EXPECT_TRUE(first->result.violations.empty()) << first->result.violations.front();
  }
}

}  // namespace
}  // namespace fathom::sim
