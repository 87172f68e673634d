// The SSD log in the replayable simulation (issue 58): every node's real Server keeps its ObjectLog in its
// --data_dir on the simulated disk, the writer a task on the node's executor, so log epochs close under
// the workload; a disk that fails for a while stops them closing without losing anything, and a power
// loss keeps what was synced.
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_join.h"
#include "coordinator/configuration.h"
#include "gtest/gtest.h"
#include "logging/log_reader.h"
#include "logging/object_log.h"
#include "platform/base/status_test_macros.h"
#include "tests/sim/seeds.h"
#include "tests/sim/sim_cluster.h"
#include "tests/sim/sim_probes.h"
#include "tests/sim/sim_workload.h"

namespace fathom::sim {
namespace {

SimClusterOptions LoggedOptions(uint64_t seed) {
  SimClusterOptions options;
  options.seed = seed;
  options.ssd_log = true;
  return options;
}

void ExpectWorkloadHeld(const absl::StatusOr<SimWorkloadResult>& result) {
  ASSERT_OK(result.status());
  EXPECT_EQ(result->audit_blocked, "");
  EXPECT_TRUE(result->violations.empty()) << absl::StrJoin(result->violations, "\n");
  EXPECT_GT(result->committed, 0u);
}

// Runs until every running node's log has closed `epoch` and has everything appended on disk.
absl::Status RunUntilLogsClosed(SimCluster& cluster, uint64_t epoch) {
  return RunUntilWithOneManager(
      cluster,
      [&] {
        for (int i = 1; i <= cluster.size(); ++i) {
          const uint32_t id = static_cast<uint32_t>(i);
          if (cluster.stopped(id)) continue;
          const logging::ObjectLogStats s = cluster.server(id).log()->Stats();
          if (s.closed_epoch < epoch || s.persisted_position < s.enqueued_position) return false;
        }
        return true;
      },
      absl::Seconds(30));
}

TEST(SsdLogTest, EveryNodeLogsAndItsEpochsCloseUnderTheWorkload) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    uint64_t histories[2] = {0, 0};
    for (int run = 0; run < 2; ++run) {
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<SimCluster> cluster, SimCluster::Start(LoggedOptions(seed)));
      SimWorkloadOptions workload;
      workload.transfers_per_thread = 6;
      workload.kv_keys = 4;
      ExpectWorkloadHeld(RunSimWorkload(*cluster, workload, seed));
      uint64_t closed = 0;
      for (int i = 1; i <= cluster->size(); ++i) closed = std::max(closed, cluster->server(i).log()->Stats().closed_epoch);
      EXPECT_GT(closed, 0u) << "no log epoch closed";
      ASSERT_OK(RunUntilLogsClosed(*cluster, closed));
      for (int i = 1; i <= cluster->size(); ++i) {
        const uint32_t id = static_cast<uint32_t>(i);
        ASSERT_OK_AND_ASSIGN(logging::LogContents log,
                             logging::ReadLog(SimCluster::DataDirOf(id), id, cluster->disk().env()));
        EXPECT_GT(log.states.size(), 0u) << "node " << id << " logged nothing";
        EXPECT_EQ(log.position, cluster->server(id).log()->Stats().persisted_position);
      }
      EXPECT_OK(IdenticalReplicasOnceSettled(*cluster));
      histories[run] = cluster->history();
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_EQ(histories[0], histories[1]) << "the runs diverged";
  }
}

// The disk fails every write for ten lease periods from the workload's start: the logs retry, no log
// epoch closes meanwhile (commits wait for it, or go on, as the epochs allow), and once it heals every
// log catches up and closes epochs again; nothing the workload was told is lost.
TEST(SsdLogTest, ADiskThatFailsForAWhileLosesNothing) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SimCluster> cluster, SimCluster::Start(LoggedOptions(seed)));
    SimCluster* const c = cluster.get();
    const absl::Duration failing_for = 10 * c->options().lease_period;
    absl::Time heal_at = absl::InfiniteFuture();
    uint64_t healer = 0;
    uint64_t closed_when_failing = 0;
    SimWorkloadOptions workload;
    workload.transfers_per_thread = 6;
    workload.kv_keys = 4;
    workload.on_started = [&] {
      for (int i = 1; i <= c->size(); ++i) {
        closed_when_failing = std::max(closed_when_failing, c->server(i).log()->Stats().closed_epoch);
      }
      c->disk().set_failing(true);
      heal_at = c->network().clock().Now() + failing_for;
      healer = c->scheduler().AddTask(0, [&]() -> size_t {
        if (!c->disk().failing() || c->network().clock().Now() < heal_at) return 0;
        c->disk().set_failing(false);
        return 1;
      });
    };
    absl::Status caught_up = absl::OkStatus();
    workload.before_audit = [&] {
      caught_up = RunUntilLogsClosed(*c, closed_when_failing + 1);
    };
    ExpectWorkloadHeld(RunSimWorkload(*c, workload, seed));
    c->scheduler().RemoveTask(healer);
    EXPECT_FALSE(c->disk().failing()) << "the workload ended before the disk healed";
    EXPECT_GT(c->disk().failures(), 0) << "no write failed";
    EXPECT_OK(caught_up);
    for (int i = 1; i <= c->size(); ++i) {
      const uint32_t id = static_cast<uint32_t>(i);
      EXPECT_GT(c->server(id).log()->Stats().write_errors, 0u) << "node " << id;
      EXPECT_EQ(logging::ReadLog(SimCluster::DataDirOf(id), id, c->disk().env()).status(), absl::OkStatus()) << "node " << id;
    }
    EXPECT_OK(IdenticalReplicasOnceSettled(*c));
    if (::testing::Test::HasFailure()) return;
  }
}

// With --log_fsync, a node's machine loses power under the workload: its log on the disk is cut back to
// what was synced, which is everything the log counted as persisted; the log still reads back (a torn
// tail is cut off), and the cluster goes on without the node.
TEST(SsdLogTest, APowerLossKeepsWhatWasSynced) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    SimClusterOptions options = LoggedOptions(seed);
    options.log_fsync = true;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SimCluster> cluster, SimCluster::Start(options));
    SimCluster* const c = cluster.get();
    uint64_t persisted = 0;
    absl::Status lost = absl::OkStatus();
    SimWorkloadOptions workload;
    workload.transfers_per_thread = 6;
    workload.kv_keys = 4;
    workload.idle_nodes = {3};
    // Once node 3 (a replica of the workload's writes) has logged some of them.
    uint64_t power_cut = 0;
    workload.on_started = [&] {
      power_cut = c->scheduler().AddTask(0, [&]() -> size_t {
        if (c->stopped(3) || c->server(3).log()->Stats().persisted_position < 8) return 0;
        persisted = c->server(3).log()->Stats().persisted_position;
        lost = c->PowerLoss(3);
        return 1;
      });
    };
    absl::Status settled = absl::OkStatus();
    workload.before_audit = [&] {
      settled = RunUntilSettled(*c, absl::Seconds(30), [&] {
        return c->stopped(3) && coordinator::FindMember(c->configuration(), 3) == nullptr;
      });
    };
    ExpectWorkloadHeld(RunSimWorkload(*c, workload, seed));
    c->scheduler().RemoveTask(power_cut);
    ASSERT_OK(settled);
    ASSERT_TRUE(c->stopped(3)) << "node 3 logged too little for the power loss";
    ASSERT_OK(lost);
    EXPECT_EQ(c->disk().UnsyncedBytesUnder(SimCluster::DataDirOf(3)), 0u);
    ASSERT_OK_AND_ASSIGN(logging::LogContents log, logging::ReadLog(SimCluster::DataDirOf(3), 3, c->disk().env()));
    EXPECT_GE(log.position, persisted) << "a synced batch was lost";
    EXPECT_GT(log.states.size(), 0u);
    EXPECT_OK(IdenticalReplicasOnceSettled(*c));
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace fathom::sim
