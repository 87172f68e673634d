// The transaction workloads on 3-node embedded clusters: UCX shared memory, and SimFabric (torn copies,
// random delays that reorder operations across endpoints) under several seeds per run (FATHOM_SEED
// replays one; FATHOM_SEEDS=N runs N). After each run every backup must be byte-identical to its primary.
//   bank         the total is conserved at every snapshot and at the end; no balance goes negative;
//   cycle        the ring is still one cycle of length N;
//   list-append  the recorded history is strictly serializable (tests/history's checker).
#include <cstdlib>

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/test_seed.h"
#include "txn/testing/txn_cluster.h"
#include "tests/workloads/bank.h"
#include "tests/workloads/cycle.h"
#include "tests/workloads/list_append.h"

namespace fathom::txn {
namespace {

using Fabric = testing::TestFabric;

std::vector<uint64_t> Seeds(Fabric fabric) {
  if (fabric == Fabric::kShm) return {fabric::sim::TestSeed()};  // the real fabric is not seeded; one run
  if (getenv("FATHOM_SEED") != nullptr) return {fabric::sim::TestSeed()};
  const int n = getenv("FATHOM_SEEDS") != nullptr ? atoi(getenv("FATHOM_SEEDS")) : 3;
  std::vector<uint64_t> seeds;
  for (int i = 0; i < n; ++i) seeds.push_back(fabric::sim::TestSeed());
  return seeds;
}

absl::StatusOr<std::unique_ptr<testing::TxnCluster>> StartCluster(Fabric fabric, uint64_t seed) {
  return testing::TxnCluster::Start(testing::TestClusterOptions(fabric, seed, 4 << 20));
}

std::vector<TransactionService*> Services(testing::TxnCluster& cluster) {
  std::vector<TransactionService*> services;
  for (int i = 1; i <= cluster.size(); ++i) services.push_back(&cluster.service(i));
  return services;
}

class WorkloadTest : public ::testing::TestWithParam<Fabric> {};

TEST_P(WorkloadTest, BankConservesTheTotal) {
  for (uint64_t seed : Seeds(GetParam())) {
    SCOPED_TRACE(fabric::sim::SeedTrace(seed));
    ASSERT_OK_AND_ASSIGN(auto cluster, StartCluster(GetParam(), seed));
    workloads::BankOptions options;
    options.seed = seed;
    options.retry.max_attempts = 1000;
    ASSERT_OK_AND_ASSIGN(workloads::BankResult result, workloads::RunBank(Services(*cluster), options));
    EXPECT_TRUE(result.violations.empty()) << result.violations.front();
    EXPECT_EQ(result.final_total, options.accounts * options.initial_balance);
    EXPECT_GT(result.transfers, 0u);
    EXPECT_GT(result.audits, 0u);
    EXPECT_EQ(result.gave_up, 0u);
    std::cerr << "[ info ] bank: " << result.transfers << " transfers, " << result.insufficient
              << " refused for funds, " << result.audits << " snapshots (" << result.audit_aborts << " aborted)\n";
    ASSERT_OK(cluster->WaitForQuiescence());
    ASSERT_OK(cluster->CheckReplicasIdentical());
  }
}

TEST_P(WorkloadTest, CycleStaysOneCycle) {
  for (uint64_t seed : Seeds(GetParam())) {
    SCOPED_TRACE(fabric::sim::SeedTrace(seed));
    ASSERT_OK_AND_ASSIGN(auto cluster, StartCluster(GetParam(), seed));
    workloads::CycleOptions options;
    options.seed = seed;
    options.retry.max_attempts = 1000;
    ASSERT_OK_AND_ASSIGN(workloads::CycleResult result, workloads::RunCycle(Services(*cluster), options));
    EXPECT_EQ(result.violation, "");
    EXPECT_EQ(result.gave_up, 0u);
    EXPECT_GT(result.committed, 0u);
    ASSERT_OK(cluster->WaitForQuiescence());
    ASSERT_OK(cluster->CheckReplicasIdentical());
  }
}

TEST_P(WorkloadTest, ListAppendHistoryIsStrictlySerializable) {
  for (uint64_t seed : Seeds(GetParam())) {
    SCOPED_TRACE(fabric::sim::SeedTrace(seed));
    ASSERT_OK_AND_ASSIGN(auto cluster, StartCluster(GetParam(), seed));
    workloads::ListAppendOptions options;
    options.seed = seed;
    ASSERT_OK_AND_ASSIGN(workloads::ListAppendResult result, workloads::RunListAppend(Services(*cluster), options));
    EXPECT_TRUE(result.check.valid()) << result.check.ToString() << "\nhistory:\n" << result.history;
    EXPECT_GT(result.ok, 0u);
    std::cerr << "[ info ] list-append: " << result.ok << " ok, " << result.failed << " failed, " << result.info
              << " unknown\n";
    ASSERT_OK(cluster->WaitForQuiescence());
    ASSERT_OK(cluster->CheckReplicasIdentical());
  }
}

INSTANTIATE_TEST_SUITE_P(Fabrics, WorkloadTest, ::testing::Values(Fabric::kShm, Fabric::kSim),
                         [](const auto& info) { return testing::TestFabricName(info.param); });

}  // namespace
}  // namespace fathom::txn
