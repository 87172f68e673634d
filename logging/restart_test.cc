// Whole-cluster restart from the SSD logs on an embedded 3-node cluster running the bank workload.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include <thread>

#include "gtest/gtest.h"
#include "logging/restore.h"
#include "logging/testing/logged_cluster.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/test_seed.h"
#include "platform/object/object_layout.h"
#include "tests/util/fresh_dir.h"
#include "tests/workloads/bank.h"
#include "tests/workloads/support.h"

namespace fathom::logging {
namespace {

using testing::LoggedCluster;
using testing::LoggedClusterOptions;

std::string FreshDir(const std::string& name) {
  return fathom::testing::FreshTestDir("restart_test", name);
}

LoggedClusterOptions Options(const std::string& root, bool restore) {
  LoggedClusterOptions options;
  options.cluster.nodes = 3;
  options.cluster.threads = 2;
  options.cluster.memory_bytes = 8 << 20;
  options.root = root;
  options.restore = restore;
  return options;
}

txn::workloads::BankOptions Bank(uint64_t seed) {
  txn::workloads::BankOptions bank;
  bank.clients_per_node = 2;
  bank.transfers_per_client = 60;
  bank.seed = seed;
  return bank;
}



// Reads every live object of the restored image through a transaction: the sum of the balances.
absl::StatusOr<int64_t> TotalOfLiveObjects(LoggedCluster& cluster, const ClusterImage& image) {
  std::vector<object::ObjectRef> refs;
  for (const auto& [raw, state] : image.newest) {
    if (state.live()) refs.push_back({state.address, state.incarnation, state.capacity});
  }
  txn::Transaction tx = cluster.service(2).Begin();
  auto values = tx.ReadMany(refs);
  if (!values.ok()) return values.status();
  int64_t total = 0;
  for (const std::string& bytes : *values) {
    auto balance = txn::workloads::DecodeInt(bytes);
    if (!balance.ok()) return balance.status();
    total += *balance;
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return total;
}

TEST(RestartTest, AWholeClusterRestartsFromItsLogsWithEveryCommittedTransfer) {
  const std::string root = FreshDir("clean");
  std::map<uint32_t, std::string> before;
  uint64_t transfers = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto cluster, LoggedCluster::Start(Options(root, /*restore=*/false)));
    ASSERT_OK_AND_ASSIGN(auto result, txn::workloads::RunBank(cluster->services(), Bank(1)));
    EXPECT_TRUE(result.violations.empty()) << result.violations.front();
    transfers = result.transfers;
    ASSERT_OK(cluster->WaitForQuiescence());  // backups applied: their states are appended too
    ASSERT_OK(cluster->WaitForLogs());        // lag 0 on every node
    ASSERT_OK(cluster->CheckReplicasIdentical());
    const auto counters = cluster->cluster().node(1).OnStats().counters();
    EXPECT_GT(counters.at("log.persisted_position"), 0u);
    EXPECT_EQ(counters.at("log.lag_records"), 0u);
    EXPECT_EQ(counters.at("log.error"), 0u);
    before = cluster->Memory();
  }  // every node stops
  ASSERT_GT(transfers, 0u);

  for (int round = 1; round <= 2; ++round) {
    SCOPED_TRACE(::testing::Message() << "restart " << round);
    ASSERT_OK_AND_ASSIGN(auto cluster, LoggedCluster::Start(Options(root, /*restore=*/true)));
    // Every account is back, on its primary and its backup, at the version it had: memory is byte for
    // byte what it was when the nodes stopped.
    const ClusterImage image = MergeLogs(cluster->restored().logs);
    EXPECT_EQ(cluster->restored().primaries, image.newest.size());
    EXPECT_EQ(cluster->restored().backups, image.newest.size());  // f = 1
    EXPECT_EQ(image.newest.size(), 24u * round);
    EXPECT_EQ(cluster->Memory(), before);
    ASSERT_OK(cluster->CheckReplicasIdentical());
    EXPECT_EQ(cluster->restored().epoch, uint64_t(round) + 1);
    ASSERT_OK_AND_ASSIGN(int64_t total, TotalOfLiveObjects(*cluster, image));
    EXPECT_EQ(total, 2400 * round);

    // The restarted cluster serves: another bank (new accounts, allocated around the restored ones),
    // transfers that also touch nothing old; the old money stays where it was.
    ASSERT_OK_AND_ASSIGN(auto result, txn::workloads::RunBank(cluster->services(), Bank(round + 1)));
    EXPECT_TRUE(result.violations.empty()) << result.violations.front();
    EXPECT_EQ(result.final_total, 2400);
    ASSERT_OK_AND_ASSIGN(int64_t old_total, TotalOfLiveObjects(*cluster, image));
    EXPECT_EQ(old_total, 2400 * round);
    ASSERT_OK(cluster->WaitForQuiescence());
    ASSERT_OK(cluster->WaitForLogs());
    ASSERT_OK(cluster->CheckReplicasIdentical());
    before = cluster->Memory();
  }
}

TEST(RestartTest, AfterACrashNothingPersistedIsLostAndTheRestartIsCheckedNotPartial) {
  const std::string root = FreshDir("crash");
  std::map<uint64_t, uint64_t> durable;  // versions once the logs had caught up
  {
    ASSERT_OK_AND_ASSIGN(auto cluster, LoggedCluster::Start(Options(root, /*restore=*/false)));
    ASSERT_OK_AND_ASSIGN(auto result, txn::workloads::RunBank(cluster->services(), Bank(7)));
    EXPECT_TRUE(result.violations.empty());
    ASSERT_OK(cluster->WaitForQuiescence());
    ASSERT_OK(cluster->WaitForLogs());
    durable = LoggedCluster::SlotVersions(cluster->Memory());
    // More transfers, then a crash with whatever is still queued (and not yet truncated) lost.
    txn::workloads::BankOptions more = Bank(8);
    more.transfers_per_client = 30;
    ASSERT_OK_AND_ASSIGN(auto second, txn::workloads::RunBank(cluster->services(), more));
    EXPECT_TRUE(second.violations.empty());
    cluster->Crash();
  }
  ASSERT_OK_AND_ASSIGN(auto cluster, LoggedCluster::Start(Options(root, /*restore=*/true)));
  const std::map<uint64_t, uint64_t> restored = LoggedCluster::SlotVersions(cluster->Memory());
  for (const auto& [raw, version] : durable) {
    auto it = restored.find(raw);
    ASSERT_NE(it, restored.end()) << memory::GlobalAddress::FromRaw(raw).ToString() << " lost";
    EXPECT_GE(it->second, version) << memory::GlobalAddress::FromRaw(raw).ToString();
  }
  ASSERT_OK(cluster->CheckReplicasIdentical());
  // The restarted cluster takes transactions.
  ASSERT_OK_AND_ASSIGN(auto result, txn::workloads::RunBank(cluster->services(), Bank(9)));
  EXPECT_TRUE(result.violations.empty());
}

// The test: a crash in the middle of the bank workload, with every node's log cut at a different
// moment (as a power cut hits disks that are each behind by their own amount). The logs' states of the
// log epochs every node closed are a consistent cut, so the restored accounts hold the same total: a
// transfer is restored whole or not at all. (Without log epochs, merging the newest state of each object
// from the logs gave totals such as 2380 and 2424.)
// Rounds 0-2 on shared memory, 3-5 on SimFabric with torn copies (seeded; the node threads are not).
TEST(RestartTest, ACrashMidWorkloadRestoresAConsistentCutWithTheTotalConserved) {
  for (int round = 0; round < 6; ++round) {
    const std::string root = FreshDir(absl::StrCat("mid_workload_", round));
    const uint64_t seed = fabric::sim::TestSeed();
    SCOPED_TRACE(absl::StrCat("round ", round, round >= 3 ? " (sim) " : " (shm) ", fabric::sim::SeedTrace(seed)));
    {
      LoggedClusterOptions options = Options(root, /*restore=*/false);
      if (round >= 3) {
        options.cluster.fabric = server::EmbeddedFabric::kSim;
        options.cluster.sim.seed = seed;
        options.cluster.sim.torn_copies = true;
      }
      options.txn.log_epoch_interval = absl::Milliseconds(2);
      ASSERT_OK_AND_ASSIGN(auto cluster, LoggedCluster::Start(options));
      txn::workloads::BankOptions bank = Bank(20 + round);
      bank.transfers_per_client = 400;
      absl::StatusOr<txn::workloads::BankResult> result;
      std::thread workload([&] { result = txn::workloads::RunBank(cluster->services(), bank); });
      // Once some transfers are in a log epoch every log closed (so the restart must show them)...
      auto committed = [&] {
        uint64_t n = 0;
        for (txn::TransactionService* service : cluster->services()) {
          if (auto stats = service->Stats(); stats.ok()) n += stats->coordinator.committed;
        }
        return n;
      };
      for (int i = 0; i < 6000 && committed() < 60; ++i) absl::SleepFor(absl::Milliseconds(5));
      const uint64_t epoch = cluster->service(1).log_epochs()->current();
      for (int i = 0; i < 6000; ++i) {
        bool closed = true;
        for (uint32_t node = 1; node <= 3; ++node) closed &= cluster->log(node)->PersistedEpoch().value_or(0) >= epoch;
        if (closed) break;
        absl::SleepFor(absl::Milliseconds(1));
      }
      // ...cut the logs one after the other while transfers run; whatever they get after that is lost.
      absl::SleepFor(absl::Milliseconds(10 * (round % 3)));
      for (uint32_t node = 1; node <= 3; ++node) {
        cluster->AbandonLog(node);
        absl::SleepFor(absl::Milliseconds(round % 3));
      }
      workload.join();
      ASSERT_OK(result.status());
      EXPECT_TRUE(result->violations.empty()) << result->violations.front();
    }
    ASSERT_OK_AND_ASSIGN(auto cluster, LoggedCluster::Start(Options(root, /*restore=*/true)));
    ASSERT_OK(cluster->CheckReplicasIdentical());
    const ClusterImage image = MergeLogs(cluster->restored().logs);
    EXPECT_GT(image.log_epoch, 0u);
    ASSERT_OK_AND_ASSIGN(int64_t total, TotalOfLiveObjects(*cluster, image));
    EXPECT_EQ(total, 2400) << "restored log epochs up to " << image.log_epoch;
    bool moved = false;
    for (const auto& [raw, state] : image.newest) moved |= state.live() && state.version > 1;
    EXPECT_TRUE(moved) << "no transfer came back, though some were in a closed epoch";
  }
}

// Log format 2 under a cluster: segments folded many times during the run (a tiny fold_bytes), then a
// crash with the last segments unfolded. Everything was persisted before the crash, so the restart must
// give back memory byte for byte, whether a state came from an object key or a segment.
TEST(RestartTest, FoldedKeysAndTheSegmentsACrashLeftTogetherRestoreEverything) {
  const std::string root = FreshDir("folds");
  std::map<uint32_t, std::string> before;
  {
    LoggedClusterOptions options = Options(root, /*restore=*/false);
    options.log.fold_bytes = 4096;
    ASSERT_OK_AND_ASSIGN(auto cluster, LoggedCluster::Start(options));
    ASSERT_OK_AND_ASSIGN(auto result, txn::workloads::RunBank(cluster->services(), Bank(11)));
    EXPECT_TRUE(result.violations.empty());
    ASSERT_OK(cluster->WaitForQuiescence());
    ASSERT_OK(cluster->WaitForLogs());
    for (int i = 1; i <= 3; ++i) {
      const ObjectLogStats stats = cluster->log(i)->Stats();
      // Folds wait for their epochs to be durable on every node, so how many there are depends on timing.
      EXPECT_GE(stats.folds, 1u) << "node " << i;
      EXPECT_GT(stats.batches, stats.folds) << "node " << i << ": some batches stayed segments";
    }
    before = cluster->Memory();
    cluster->Crash();
  }
  ASSERT_OK_AND_ASSIGN(auto cluster, LoggedCluster::Start(Options(root, /*restore=*/true)));
  EXPECT_EQ(cluster->Memory(), before);
  ASSERT_OK(cluster->CheckReplicasIdentical());
  const ClusterImage image = MergeLogs(cluster->restored().logs);
  ASSERT_OK_AND_ASSIGN(int64_t total, TotalOfLiveObjects(*cluster, image));
  EXPECT_EQ(total, 2400);
}

}  // namespace
}  // namespace fathom::logging
