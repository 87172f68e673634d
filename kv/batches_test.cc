// RunBatches (kv/batches.h): every batch runs, at most in_flight at once, and the first error stops
// new ones and is returned.
#include "kv/batches.h"

#include <atomic>
#include <memory>

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/test_seed.h"
#include "txn/testing/txn_cluster.h"

namespace fathom::kv {
namespace {

struct Counts {
  std::atomic<int> started{0};
  std::atomic<int> running{0};
  std::atomic<int> most_running{0};
};

// A batch that stays running for `time` of the thread's time (zero: ends at once), then ends with `result`.
BatchBody Slow(std::shared_ptr<Counts> counts, absl::Status result, absl::Duration time = absl::Milliseconds(1)) {
  return [counts, result, time](txn::TxnThread& thread, std::shared_ptr<txn::TxState>,
                                txn::DoneCallback body_done) {
    ++counts->started;
    const int now = ++counts->running;
    for (int most = counts->most_running; now > most && !counts->most_running.compare_exchange_weak(most, now);) {
    }
    if (time == absl::ZeroDuration()) {
      --counts->running;
      body_done(result);
      return;
    }
    thread.After(time, [counts, result, body_done] {
      --counts->running;
      body_done(result);
    });
  };
}

class BatchesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = fabric::sim::TestSeed();
    auto cluster = txn::testing::TxnCluster::Start(txn::testing::TestClusterOptions(txn::testing::TestFabric::kSim, seed_));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }
  uint64_t seed_ = 0;
  std::unique_ptr<txn::testing::TxnCluster> cluster_;
};

TEST_F(BatchesTest, EveryBatchRunsAtMostInFlightAtOnce) {
  auto counts = std::make_shared<Counts>();
  BatchOptions options;
  options.in_flight = 3;
  ASSERT_OK(RunBatches(cluster_->service(1), 40, [&](size_t) { return Slow(counts, absl::OkStatus()); }, options));
  EXPECT_EQ(counts->started, 40);
  EXPECT_EQ(counts->running, 0);
  EXPECT_LE(counts->most_running, 3);
  EXPECT_GE(counts->most_running, 2);  // they do overlap
}

TEST_F(BatchesTest, TheFirstErrorStopsNewBatchesAndIsReturned) {
  auto counts = std::make_shared<Counts>();
  BatchOptions options;
  options.in_flight = 2;
  // Batches start in order, over the node's threads. Batch 5 fails as it starts and the others run 50 ms,
  // so the batch beside it ends (freeing a slot) only after the failure is recorded unless the host stalls
  // that long. (With every batch 1 ms long, the batch beside batch 5 ended first on a loaded host under
  // TSan and let an eighth start: a start before the failure, not a bug.)
  absl::Status s = RunBatches(
      cluster_->service(1), 100,
      [&](size_t i) {
        return i == 5 ? Slow(counts, absl::DataLossError("batch 5"), absl::ZeroDuration())
                      : Slow(counts, absl::OkStatus(), absl::Milliseconds(50));
      },
      options);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_EQ(s.message(), "batch 5");
  EXPECT_LE(counts->started, 5 + 2);  // those already running when it failed, no more
  EXPECT_EQ(counts->running, 0);      // returned only once they ended
  ASSERT_OK(RunBatches(cluster_->service(1), 0, [&](size_t) { return Slow(counts, absl::OkStatus()); }));
}

}  // namespace
}  // namespace fathom::kv
