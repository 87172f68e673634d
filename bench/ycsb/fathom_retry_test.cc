// The fathom node clients' retries: an operation that fails because a connection is gone (Unavailable) is
// tried again with backoff until its deadline, so a connection made again meanwhile makes it succeed (it
// failed at once). With a zero deadline the first failure is final.
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "absl/time/clock.h"
#include "bench/ycsb/fathom_backend.h"
#include "bench/ycsb/record_codec.h"
#include "gtest/gtest.h"
#include "kv/kv.h"
#include "platform/base/status_test_macros.h"
#include "server/embedded_cluster.h"

namespace fathom::ycsb {
namespace {

constexpr int kKeys = 20;

class FathomRetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::EmbeddedClusterOptions options;
    options.fabric = server::EmbeddedFabric::kSim;
    options.threads = 1;
    ASSERT_OK_AND_ASSIGN(cluster_, server::EmbeddedCluster::Start(options));
    kv::TableOptions table;
    table.buckets = 64;
    ASSERT_OK_AND_ASSIGN(kv::Table created,
                         kv::Table::Create(cluster_->server(1).transactions(), catalog_, "usertable", table));
    for (int i = 0; i < kKeys; ++i) ASSERT_OK(created.Put(absl::StrCat("user", i), EncodeRecord({{"f", "v"}})));
    ASSERT_OK_AND_ASSIGN(kv::Table opened, kv::Table::Open(cluster_->server(1).transactions(), catalog_, "usertable"));
    table_.emplace(std::move(opened));
    ASSERT_OK_AND_ASSIGN(thread_, TxnThreadOf(cluster_->server(1).transactions(), 0));
  }

  // Node 1 loses its connections to nodes 2 and 3.
  void CutOffNode1() {
    EXPECT_OK(cluster_->node(1).Disconnect(2));
    EXPECT_OK(cluster_->node(1).Disconnect(3));
  }
  // A thread that makes them again shortly, once the first reads have failed (most likely).
  std::thread ReconnectNode1Soon() {
    return std::thread([this] {
      absl::SleepFor(absl::Milliseconds(30));
      EXPECT_OK(cluster_->node(1).JoinInProcess(cluster_->node(2)));
      EXPECT_OK(cluster_->node(1).JoinInProcess(cluster_->node(3)));
    });
  }

  // Reads every key through a backend on node 1's thread while node 1 has no connection to nodes 2 and
  // 3; `reconnect` runs on another thread meanwhile. The statuses, in key order.
  std::vector<absl::Status> ReadAllCutOff(absl::Duration retry_deadline, bool reconnect) {
    FathomAsyncBackend backend(thread_, *table_, /*seed=*/7, retry_deadline);
    CutOffNode1();
    std::vector<std::string> keys;
    for (int i = 0; i < kKeys; ++i) keys.push_back(absl::StrCat("user", i));
    std::vector<absl::Status> results(kKeys);
    fathom::Notification done;
    int left = kKeys;
    absl::Status posted = cluster_->server(1).transactions().Post(0, [&](txn::TxnThread&) {
      for (int i = 0; i < kKeys; ++i) {
        backend.Read("usertable", keys[i], nullptr, [&, i](absl::StatusOr<Record> r) {
          results[i] = r.status();
          if (--left == 0) done.Notify();
        });
      }
    });
    EXPECT_OK(posted);
    std::thread joiner = reconnect ? ReconnectNode1Soon() : std::thread();
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(120)));
    if (joiner.joinable()) joiner.join();
    // The last callback may run inside a call that still uses its key: the backend and the keys stay until
    // the thread has moved on to a later task.
    fathom::Notification drained;
    EXPECT_OK(cluster_->server(1).transactions().Post(0, [&](txn::TxnThread&) { drained.Notify(); }));
    drained.WaitForNotification();
    return results;
  }

  // The same through the synchronous backend (verify, the bank's check), reads on this thread.
  std::vector<absl::Status> ReadAllCutOffSync(absl::Duration retry_deadline, bool reconnect) {
    FathomBackend backend(&cluster_->server(1).transactions(), *table_, retry_deadline);
    CutOffNode1();
    std::thread joiner = reconnect ? ReconnectNode1Soon() : std::thread();
    std::vector<absl::Status> results;
    for (int i = 0; i < kKeys; ++i) {
      Record record;
      results.push_back(backend.Read("usertable", absl::StrCat("user", i), nullptr, &record));
    }
    if (joiner.joinable()) joiner.join();
    return results;
  }

  std::unique_ptr<server::EmbeddedCluster> cluster_;
  kv::InProcessCatalog catalog_;
  std::optional<kv::Table> table_;
  txn::TxnThread* thread_ = nullptr;
};

TEST_F(FathomRetryTest, ReadsRetryUntilTheConnectionIsBack) {
  for (const absl::Status& s : ReadAllCutOff(absl::Seconds(60), /*reconnect=*/true)) EXPECT_OK(s);
}

TEST_F(FathomRetryTest, WithoutADeadlineTheFirstFailureIsFinal) {
  int unavailable = 0;
  for (const absl::Status& s : ReadAllCutOff(absl::ZeroDuration(), /*reconnect=*/false)) {
    if (absl::IsUnavailable(s)) ++unavailable;
  }
  EXPECT_GT(unavailable, 0) << "every key was on node 1: the test proves nothing";
}

// Verify reads through the synchronous backend: one that lacked a lease or a connection for a moment
// failed the whole verify ("not connected to node 1" after a partition healed).
TEST_F(FathomRetryTest, SynchronousReadsRetryUntilTheConnectionIsBack) {
  for (const absl::Status& s : ReadAllCutOffSync(absl::Seconds(60), /*reconnect=*/true)) EXPECT_OK(s);
}

TEST_F(FathomRetryTest, SynchronousReadsWithoutADeadlineFailAtOnce) {
  int unavailable = 0;
  for (const absl::Status& s : ReadAllCutOffSync(absl::ZeroDuration(), /*reconnect=*/false)) {
    if (absl::IsUnavailable(s)) ++unavailable;
  }
  EXPECT_GT(unavailable, 0) << "every key was on node 1: the test proves nothing";
}

}  // namespace
}  // namespace fathom::ycsb
