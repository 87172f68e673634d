// RunTransactionAsync on embedded clusters (UCX shared memory, and SimFabric under a seed): concurrent
// read-increment-write transactions from every node thread lose no update (conflicts are retried), a body's
// own error is returned without committing anything, and bad options are refused.
#include "txn/run_async.h"

#include <atomic>

#include "gtest/gtest.h"
#include "platform/base/mutex.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/test_seed.h"
#include "txn/testing/txn_cluster.h"
#include "tests/workloads/support.h"

namespace fathom::txn {
namespace {

using object::ObjectRef;
using testing::TestFabric;
using testing::TxnCluster;
using workloads::DecodeInt;
using workloads::EncodeInt;

class RunAsyncTest : public ::testing::TestWithParam<TestFabric> {
 protected:
  void SetUp() override {
    auto cluster = TxnCluster::Start(testing::TestClusterOptions(GetParam(), fabric::sim::TestSeed(), 4 << 20));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    auto counter = NewCounter();
    ASSERT_OK(counter.status());
    counter_ = *counter;
  }

  absl::StatusOr<ObjectRef> NewCounter() {
    ObjectRef ref;
    RETURN_IF_ERROR(RunTransaction(cluster_->service(2), [&](Transaction& tx) -> absl::Status {
      ASSIGN_OR_RETURN(ref, tx.Alloc(8, {.node = 2}));
      return tx.Write(ref, EncodeInt(0));
    }));
    return ref;
  }

  absl::StatusOr<int64_t> ReadCounter() {
    Transaction tx = cluster_->service(1).Begin();
    ASSIGN_OR_RETURN(std::string bytes, tx.Read(counter_));
    RETURN_IF_ERROR(tx.Commit());
    return DecodeInt(bytes);
  }

  // A body that adds `delta` to the counter (or fails with `error` after reading it).
  AsyncBody Increment(TxnThread& thread, int64_t delta, absl::Status error = absl::OkStatus()) {
    const ObjectRef ref = counter_;
    return [&thread, ref, delta, error](std::shared_ptr<TxState> tx, DoneCallback body_done) {
      thread.Read(*tx, ref, [&thread, tx, ref, delta, error, body_done](absl::StatusOr<std::string> bytes) {
        if (!bytes.ok()) return body_done(bytes.status());
        absl::StatusOr<int64_t> value = DecodeInt(*bytes);
        if (!value.ok()) return body_done(value.status());
        absl::Status written = thread.Write(*tx, ref, EncodeInt(*value + delta));
        body_done(written.ok() ? error : written);
      });
    };
  }

  std::unique_ptr<TxnCluster> cluster_;
  ObjectRef counter_;
};

TEST_P(RunAsyncTest, ConcurrentIncrementsFromEveryThreadAllCount) {
  constexpr int kPerThread = 40;
  std::atomic<int> pending{0};
  std::atomic<int> failures{0};
  fathom::Notification all_done;
  const int threads = cluster_->size() * cluster_->service(1).threads();
  pending = threads * kPerThread;
  for (uint32_t node = 1; node <= static_cast<uint32_t>(cluster_->size()); ++node) {
    for (int t = 0; t < cluster_->service(node).threads(); ++t) {
      ASSERT_OK(cluster_->service(node).Post(t, [&, node, t](TxnThread& thread) {
        RetryOptions retry;
        retry.max_attempts = 1000;
        retry.seed = node * 16 + t;
        // All of this thread's increments in flight at once, so they conflict with each other too.
        for (int i = 0; i < kPerThread; ++i) {
          RunTransactionAsync(thread, Increment(thread, 1), [&](absl::Status s) {
            if (!s.ok()) failures.fetch_add(1);
            if (pending.fetch_sub(1) == 1) all_done.Notify();
          }, retry);
        }
      }));
    }
  }
  ASSERT_TRUE(all_done.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_EQ(failures.load(), 0);
  auto value = ReadCounter();
  ASSERT_OK(value.status());
  EXPECT_EQ(*value, threads * kPerThread);
  ASSERT_OK(cluster_->WaitForQuiescence());
  EXPECT_OK(cluster_->CheckReplicasIdentical());
}

TEST_P(RunAsyncTest, BodyErrorIsReturnedAndNothingCommits) {
  fathom::Notification done;
  absl::Status result;
  ASSERT_OK(cluster_->service(1).Post(0, [&](TxnThread& thread) {
    RunTransactionAsync(thread, Increment(thread, 5, absl::FailedPreconditionError("no funds")),
                        [&](absl::Status s) {
                          result = s;
                          done.Notify();
                        });
  }));
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_EQ(result.code(), absl::StatusCode::kFailedPrecondition) << result;
  auto value = ReadCounter();
  ASSERT_OK(value.status());
  EXPECT_EQ(*value, 0);
}

TEST_P(RunAsyncTest, ZeroAttemptsIsInvalid) {
  fathom::Notification done;
  absl::Status result;
  ASSERT_OK(cluster_->service(1).Post(0, [&](TxnThread& thread) {
    RunTransactionAsync(thread, Increment(thread, 1), [&](absl::Status s) {
      result = s;
      done.Notify();
    }, RetryOptions{.max_attempts = 0});
  }));
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_EQ(result.code(), absl::StatusCode::kInvalidArgument) << result;
}

INSTANTIATE_TEST_SUITE_P(Fabrics, RunAsyncTest, ::testing::Values(TestFabric::kShm, TestFabric::kSim),
                         [](const auto& info) { return testing::TestFabricName(info.param); });

}  // namespace
}  // namespace fathom::txn
