// kv::Table's operations inside asynchronous transactions on node threads (txn/run_async.h), on a 3-node
// TxnCluster over UCX shared memory and SimFabric: concurrent transfers between KV keys from every node
// thread conserve the total; a transaction reads its own writes and deletes; nothing commits without the
// caller's commit; bad keys and values are refused.
#include <atomic>
#include <memory>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kv/kv.h"
#include "platform/base/mutex.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/test_seed.h"
#include "txn/run_async.h"
#include "txn/testing/txn_cluster.h"
#include "tests/workloads/support.h"

namespace fathom::kv {
namespace {

using txn::DoneCallback;
using txn::TxnThread;
using txn::TxState;
using txn::testing::TxnCluster;
using txn::workloads::DecodeInt;
using txn::workloads::EncodeInt;

class TableTxAsyncTest : public ::testing::TestWithParam<txn::testing::TestFabric> {
 protected:
  void SetUp() override {
    seed_ = fabric::sim::TestSeed();
    auto cluster = TxnCluster::Start(txn::testing::TestClusterOptions(GetParam(), seed_));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    auto created = Table::Create(cluster_->service(1), catalog_, "t", {.buckets = 16});
    ASSERT_TRUE(created.ok()) << created.status();
    for (uint32_t n = 1; n <= 3; ++n) {
      auto opened = Table::Open(cluster_->service(n), catalog_, "t");
      ASSERT_TRUE(opened.ok()) << opened.status();
      tables_.push_back(*opened);
    }
  }

  // Runs `body` as one retried transaction on node 1's thread 0 and returns its outcome.
  absl::Status RunOnNode1(std::function<void(TxnThread&, std::shared_ptr<TxState>, DoneCallback)> body) {
    fathom::Notification done;
    absl::Status result;
    absl::Status posted = cluster_->service(1).Post(0, [&](TxnThread& thread) {
      txn::RunTransactionAsync(
          thread, [&thread, body](std::shared_ptr<TxState> tx, DoneCallback body_done) { body(thread, tx, body_done); },
          [&](absl::Status s) {
            result = s;
            done.Notify();
          });
    });
    if (!posted.ok()) return posted;
    if (!done.WaitForNotificationWithTimeout(absl::Seconds(30))) return absl::DeadlineExceededError("no answer");
    return result;
  }

  uint64_t seed_ = 0;
  std::unique_ptr<TxnCluster> cluster_;
  InProcessCatalog catalog_;
  std::vector<Table> tables_;
};

TEST_P(TableTxAsyncTest, ConcurrentTransfersConserveTheTotal) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  constexpr int kAccounts = 6;
  constexpr int kPerThread = 25;
  for (int a = 0; a < kAccounts; ++a) ASSERT_OK(tables_[0].Put(absl::StrCat("acct", a), EncodeInt(100)));
  std::atomic<int> pending{3 * 2 * kPerThread};
  std::atomic<int> failures{0};
  fathom::Notification all_done;
  for (uint32_t n = 1; n <= 3; ++n) {
    for (int t = 0; t < 2; ++t) {
      const Table table = tables_[n - 1];
      ASSERT_OK(cluster_->service(n).Post(t, [&, table, n, t](TxnThread& thread) {
        for (int i = 0; i < kPerThread; ++i) {
          const std::string from = absl::StrCat("acct", (n + t + i) % kAccounts);
          const std::string to = absl::StrCat("acct", (n * 2 + t + 3 * i + 1) % kAccounts);
          if (from == to) {
            if (pending.fetch_sub(1) == 1) all_done.Notify();
            continue;
          }
          txn::RunTransactionAsync(
              thread,
              [&thread, table, from, to](std::shared_ptr<TxState> tx, DoneCallback body_done) {
                table.GetAsync(thread, tx, from, [&thread, table, tx, from, to, body_done](absl::StatusOr<std::string> a) {
                  if (!a.ok()) return body_done(a.status());
                  table.GetAsync(thread, tx, to, [&thread, table, tx, from, to, a, body_done](absl::StatusOr<std::string> b) {
                    if (!b.ok()) return body_done(b.status());
                    absl::StatusOr<int64_t> x = DecodeInt(*a), y = DecodeInt(*b);
                    if (!x.ok() || !y.ok()) return body_done(absl::DataLossError("bad balance"));
                    table.PutAsync(thread, tx, from, EncodeInt(*x - 3), [&thread, table, tx, to, y, body_done](absl::Status s) {
                      if (!s.ok()) return body_done(s);
                      table.PutAsync(thread, tx, to, EncodeInt(*y + 3), body_done);
                    });
                  });
                });
              },
              [&](absl::Status s) {
                if (!s.ok()) failures.fetch_add(1);
                if (pending.fetch_sub(1) == 1) all_done.Notify();
              },
              txn::RetryOptions{.max_attempts = 1000, .seed = n * 8 + t});
        }
      }));
    }
  }
  ASSERT_TRUE(all_done.WaitForNotificationWithTimeout(absl::Seconds(120)));
  EXPECT_EQ(failures.load(), 0);
  int64_t total = 0;
  int64_t moved = 0;
  for (int a = 0; a < kAccounts; ++a) {
    ASSERT_OK_AND_ASSIGN(std::string bytes, tables_[1].Get(absl::StrCat("acct", a)));
    ASSERT_OK_AND_ASSIGN(int64_t balance, DecodeInt(bytes));
    total += balance;
    moved += std::abs(balance - 100);
  }
  EXPECT_EQ(total, kAccounts * 100);
  EXPECT_GT(moved, 0);  // the transfers did change balances
  ASSERT_OK(cluster_->WaitForQuiescence());
  EXPECT_OK(cluster_->CheckReplicasIdentical());
}

TEST_P(TableTxAsyncTest, ATransactionReadsItsOwnWritesAndDeletes) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK(tables_[0].Put("gone", "x"));
  const Table table = tables_[0];
  ASSERT_OK(RunOnNode1([table](TxnThread& thread, std::shared_ptr<TxState> tx, DoneCallback body_done) {
    table.PutAsync(thread, tx, "new", "v1", [&thread, table, tx, body_done](absl::Status s) {
      if (!s.ok()) return body_done(s);
      table.GetAsync(thread, tx, "new", [&thread, table, tx, body_done](absl::StatusOr<std::string> v) {
        if (!v.ok() || *v != "v1") return body_done(absl::InternalError("own write not seen"));
        table.DeleteAsync(thread, tx, "gone", [&thread, table, tx, body_done](absl::Status s) {
          if (!s.ok()) return body_done(s);
          table.GetAsync(thread, tx, "gone", [body_done](absl::StatusOr<std::string> v) {
            body_done(absl::IsNotFound(v.status()) ? absl::OkStatus() : absl::InternalError("own delete not seen"));
          });
        });
      });
    });
  }));
  EXPECT_EQ(*tables_[2].Get("new"), "v1");
  EXPECT_TRUE(absl::IsNotFound(tables_[2].Get("gone").status()));
}

TEST_P(TableTxAsyncTest, AFailedBodyCommitsNothing) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  const Table table = tables_[0];
  absl::Status s = RunOnNode1([table](TxnThread& thread, std::shared_ptr<TxState> tx, DoneCallback body_done) {
    table.PutAsync(thread, tx, "never", "v", [body_done](absl::Status s) {
      body_done(s.ok() ? absl::FailedPreconditionError("changed my mind") : s);
    });
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(absl::IsNotFound(tables_[1].Get("never").status()));
}

TEST_P(TableTxAsyncTest, BadKeysAndValuesAreRefused) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  const Table table = tables_[0];
  const std::string huge_key(table.options().max_key_bytes + 1, 'k');
  absl::Status empty_key = RunOnNode1([table](TxnThread& thread, std::shared_ptr<TxState> tx, DoneCallback body_done) {
    table.GetAsync(thread, tx, "", [body_done](absl::StatusOr<std::string> v) { body_done(v.status()); });
  });
  EXPECT_EQ(empty_key.code(), absl::StatusCode::kInvalidArgument) << empty_key;
  absl::Status long_key = RunOnNode1([table, huge_key](TxnThread& thread, std::shared_ptr<TxState> tx, DoneCallback body_done) {
    table.DeleteAsync(thread, tx, huge_key, body_done);
  });
  EXPECT_EQ(long_key.code(), absl::StatusCode::kInvalidArgument) << long_key;
  const std::string huge_value(table.options().max_value_bytes + 1, 'v');
  absl::Status long_value = RunOnNode1([table, huge_value](TxnThread& thread, std::shared_ptr<TxState> tx, DoneCallback body_done) {
    table.PutAsync(thread, tx, "k", huge_value, body_done);
  });
  EXPECT_EQ(long_value.code(), absl::StatusCode::kInvalidArgument) << long_value;
}

INSTANTIATE_TEST_SUITE_P(Fabrics, TableTxAsyncTest,
                         ::testing::Values(txn::testing::TestFabric::kShm, txn::testing::TestFabric::kSim),
                         [](const auto& info) { return txn::testing::TestFabricName(info.param); });

}  // namespace
}  // namespace fathom::kv
