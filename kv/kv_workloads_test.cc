// Workloads on KV keys, on 3-node embedded clusters (UCX shared memory, and SimFabric with torn copies
// under a seed), with each index (hopscotch and cuckoo):
//   list-append  every key holds a list; writers append inside transactions (Get(tx) + Put(tx)) while
//                readers use the lock-free one-sided GET; the recorded history (single-key GETs as
//                one-read transactions) must be strictly serializable — so lock-free GETs are
//                linearizable (tests/history). Churners insert and delete filler keys meanwhile to keep
//                the small table nearly full, so inserts displace keys (the listed ones too) while they
//                are being read; and all of it again while a resizer grows and shrinks the table;
//   bank         accounts are KV keys; transfers move money with Get(tx)/Put(tx); the total is conserved
//                at every multi-key snapshot and at the end.
#include <random>
#include <thread>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kv/kv.h"
#include "kv/kv_cluster_test.h"
#include "kv/list_append_test_util.h"
#include "platform/base/mutex.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/test_seed.h"
#include "tests/history/history.h"
#include "txn/testing/txn_cluster.h"

namespace fathom::kv {
namespace {

using txn::testing::TxnCluster;

using Fabric = txn::testing::TestFabric;

absl::StatusOr<std::unique_ptr<TxnCluster>> StartCluster(Fabric fabric, uint64_t seed) {
  return TxnCluster::Start(txn::testing::TestClusterOptions(fabric, seed));
}

// A list read back; a malformed one fails the test and reads as empty.
std::vector<int64_t> DecodeList(const std::string& text) {
  absl::StatusOr<std::vector<int64_t>> list = testing::DecodeList(text);
  EXPECT_TRUE(list.ok()) << list.status();
  return list.ok() ? *list : std::vector<int64_t>{};
}

class KvWorkloadTest : public ::testing::TestWithParam<FabricAndIndex> {
 protected:
  static Fabric fabric() { return std::get<0>(GetParam()); }
  static IndexKind kind() { return std::get<1>(GetParam()); }
};

// The list-append workload on a fresh cluster; with `resize`, a resizer grows and shrinks the table
// six times (16, 8, 32, 8, ... buckets, from every node in turn, some with no grace period so readers
// meet freed buckets, some with 20 ms in which readers still on the old generation meet its retired
// buckets) while the appenders and readers run (each at least 40 operations, and on until the
// resizer is done). Returns how many resizes published.
int RunListAppend(Fabric fabric, IndexKind kind, uint64_t seed, bool resize) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto started = StartCluster(fabric, seed);
  EXPECT_OK(started.status());
  if (!started.ok()) return 0;
  std::unique_ptr<TxnCluster> cluster = std::move(*started);
  InProcessCatalog catalog;
  auto created = Table::Create(cluster->service(1), catalog, "lists", {.kind = kind, .buckets = 8});
  EXPECT_OK(created.status());
  if (!created.ok()) return 0;
  constexpr int kKeys = 5;
  for (int k = 0; k < kKeys; ++k) EXPECT_OK(created->Put(absl::StrCat("key", k), ""));

  history::HistoryRecorder recorder;
  absl::Mutex mu;
  int64_t next_value = 1;
  std::vector<std::thread> threads;
  // Churners: 64 slots, 5 listed keys, up to 60 filler keys put twice as often as deleted, so the table
  // stays near full and most inserts must displace keys. Full-table errors are expected here.
  std::atomic<int> writers_running{3};
  std::atomic<int> filler_puts{0};
  std::atomic<int> resizes{0};
  std::atomic<bool> resizing{resize};  // clients go on (up to a cap) until the resizer is done
  for (uint32_t node = 1; node <= 3; ++node) {
    threads.emplace_back([&, node] {
      auto table = Table::Open(cluster->service(node), catalog, "lists");
      ASSERT_OK(table.status());
      std::mt19937_64 random(seed * 17 + node);
      while (writers_running.load() > 0) {
        const std::string filler = absl::StrCat("filler", random() % 60);
        if (resizing.load()) absl::SleepFor(absl::Microseconds(300));  // paced, or they starve the freeze
        absl::Status s = random() % 3 != 0 ? table->Put(filler, "f") : table->Delete(filler);
        if (s.ok()) ++filler_puts;
        ASSERT_TRUE(s.ok() || absl::IsNotFound(s) || absl::IsResourceExhausted(s)) << s;
      }
    });
  }
  if (resize) {
    threads.emplace_back([&] {
      static constexpr uint64_t kSizes[] = {16, 8, 32, 8};
      for (int i = 0; i < 6; ++i) {
        absl::SleepFor(absl::Milliseconds(2));  // operations between resizes too
        ResizeOptions options;
        options.buckets = kSizes[i % 4];
        options.grace = i % 2 == 0 ? absl::ZeroDuration() : absl::Milliseconds(20);
        absl::Status s = Table::Resize(cluster->service(1 + i % 3), catalog, "lists", options);
        if (s.ok()) ++resizes;
        // A shrink the churners' keys do not fit leaves the table as it was.
        EXPECT_TRUE(s.ok() || absl::IsResourceExhausted(s)) << s;
      }
      resizing = false;
    });
  }
  for (uint32_t node = 1; node <= 3; ++node) {
    for (int role = 0; role < 2; ++role) {  // one appender and one lock-free reader per node
      const int process = static_cast<int>(node * 2 + role);
      threads.emplace_back([&, node, role, process] {
        auto table = Table::Open(cluster->service(node), catalog, "lists");
        ASSERT_OK(table.status());
        std::mt19937_64 random(seed * 31 + process);
        for (int i = 0; i < 40 || (resizing.load() && i < 2000); ++i) {
          // Paced while the resizer runs, so reads and appends fall in every phase of every resize.
          if (resizing.load()) absl::SleepFor(absl::Microseconds(500));
          const int key = static_cast<int>(random() % kKeys);
          const std::string name = absl::StrCat("key", key);
          if (role == 1) {
            recorder.Invoke(process, {history::MicroOp::Read(key)});
            auto value = table->Get(name);
            if (value.ok()) {
              recorder.Complete(process, history::EventType::kOk, {history::MicroOp::Read(key, DecodeList(*value))});
            } else {
              recorder.Complete(process, history::EventType::kInfo, {history::MicroOp::Read(key)});
              ADD_FAILURE() << value.status();
            }
            continue;
          }
          int64_t value;
          {
            MutexLock lock(&mu);
            value = next_value++;
          }
          recorder.Invoke(process, {history::MicroOp::Append(key, value)});
          const absl::Status s = testing::AppendToList(cluster->service(node), *table, name, value);
          recorder.Complete(process, testing::AppendOutcome(s), {history::MicroOp::Append(key, value)});
        }
        if (role == 0) --writers_running;
      });
    }
  }
  for (auto& t : threads) t.join();
  // Final reads through the handle opened first (on the first generation): every committed append is there.
  constexpr int kFinalReader = 100;
  for (int key = 0; key < kKeys; ++key) {
    recorder.Invoke(kFinalReader, {history::MicroOp::Read(key)});
    auto value = created->Get(absl::StrCat("key", key));
    EXPECT_OK(value.status());
    recorder.Complete(kFinalReader, value.ok() ? history::EventType::kOk : history::EventType::kInfo,
                      {history::MicroOp::Read(key, value.ok() ? DecodeList(*value) : std::vector<int64_t>{})});
  }
  auto parsed = history::ParseHistory(recorder.Text());
  EXPECT_OK(parsed.status());
  if (!parsed.ok()) return resizes.load();
  const history::CheckResult result = history::CheckHistory(*parsed);
  EXPECT_TRUE(result.valid()) << result.ToString() << "\n" << recorder.Text();
  EXPECT_GT(result.ok, 100);
  EXPECT_GT(filler_puts.load(), 0) << "the churners did not run";
  EXPECT_OK(cluster->WaitForQuiescence());
  EXPECT_OK(cluster->CheckReplicasIdentical());
  return resizes.load();
}

TEST_P(KvWorkloadTest, LockFreeGetsAndTransactionalAppendsAreStrictlySerializable) {
  RunListAppend(fabric(), kind(), fabric::sim::TestSeed(), /*resize=*/false);
}

// The same while the table is resized again and again: no append lost, duplicated or read stale by the
// readers still on an old generation. On SimFabric, three seeds in a row.
TEST_P(KvWorkloadTest, StaysStrictlySerializableWhileTheTableIsResized) {
  const uint64_t seed = fabric::sim::TestSeed();
  const int runs = fabric() == Fabric::kSim ? 3 : 1;
  for (int run = 0; run < runs; ++run) {
    const int resizes = RunListAppend(fabric(), kind(), seed + run, /*resize=*/true);
    EXPECT_GE(resizes, 2) << "too few resizes overlapped the workload (seed " << seed + run << ")";
    std::cerr << "[ info ] seed " << seed + run << ": " << resizes << " resizes during the workload\n";
  }
}

TEST_P(KvWorkloadTest, BankOnKvKeysConservesTheTotal) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  ASSERT_OK_AND_ASSIGN(auto cluster, StartCluster(fabric(), seed));
  InProcessCatalog catalog;
  ASSERT_OK_AND_ASSIGN(Table bank, Table::Create(cluster->service(1), catalog, "bank", {.kind = kind(), .buckets = 16}));
  constexpr int kAccounts = 12;
  constexpr int64_t kInitial = 100;
  for (int a = 0; a < kAccounts; ++a) ASSERT_OK(bank.Put(absl::StrCat("acct", a), absl::StrCat(kInitial)));
  auto balance_of = [](const absl::StatusOr<std::string>& text) -> absl::StatusOr<int64_t> {
    if (!text.ok()) return text.status();
    int64_t v = 0;
    if (!absl::SimpleAtoi(*text, &v)) return absl::DataLossError(absl::StrCat("balance '", *text, "'"));
    return v;
  };
  std::atomic<int> running{0};
  std::vector<std::thread> clients;
  for (uint32_t node = 1; node <= 3; ++node) {
    ++running;
    clients.emplace_back([&, node] {
      auto table = Table::Open(cluster->service(node), catalog, "bank");
      ASSERT_OK(table.status());
      std::mt19937_64 random(seed * 7 + node);
      txn::RetryOptions retry;
      retry.max_attempts = 1000;
      retry.seed = random();
      for (int i = 0; i < 60; ++i) {
        const int from = static_cast<int>(random() % kAccounts);
        const int to = (from + 1 + static_cast<int>(random() % (kAccounts - 1))) % kAccounts;
        const int64_t amount = 1 + static_cast<int64_t>(random() % 30);
        ASSERT_OK(txn::RunTransaction(cluster->service(node), [&](txn::Transaction& tx) -> absl::Status {
          auto a = balance_of(table->Get(tx, absl::StrCat("acct", from)));
          if (!a.ok()) return a.status();
          auto b = balance_of(table->Get(tx, absl::StrCat("acct", to)));
          if (!b.ok()) return b.status();
          if (*a < amount) return absl::OkStatus();
          if (absl::Status s = table->Put(tx, absl::StrCat("acct", from), absl::StrCat(*a - amount)); !s.ok()) return s;
          return table->Put(tx, absl::StrCat("acct", to), absl::StrCat(*b + amount));
        }, retry));
      }
      --running;
    });
  }
  // Snapshots while the transfers run: all accounts in one read-only transaction.
  int snapshots = 0;
  while (running.load() > 0) {
    txn::Transaction tx = cluster->service(2).Begin();
    int64_t total = 0;
    absl::Status s = absl::OkStatus();
    for (int a = 0; a < kAccounts && s.ok(); ++a) {
      auto v = balance_of(bank.Get(tx, absl::StrCat("acct", a)));
      if (!v.ok()) {
        s = v.status();
      } else {
        EXPECT_GE(*v, 0);
        total += *v;
      }
    }
    if (s.ok()) s = tx.Commit();
    if (!tx.finished()) tx.Abort();
    if (s.ok()) {
      ++snapshots;
      EXPECT_EQ(total, kAccounts * kInitial);
    } else {
      ASSERT_TRUE(absl::IsAborted(s)) << s;
    }
  }
  for (auto& c : clients) c.join();
  int64_t total = 0;
  for (int a = 0; a < kAccounts; ++a) {
    ASSERT_OK_AND_ASSIGN(int64_t v, balance_of(bank.Get(absl::StrCat("acct", a))));
    EXPECT_GE(v, 0);
    total += v;
  }
  EXPECT_EQ(total, kAccounts * kInitial);
  std::cerr << "[ info ] bank on kv keys: " << snapshots << " snapshots during the transfers\n";
  ASSERT_OK(cluster->WaitForQuiescence());
  ASSERT_OK(cluster->CheckReplicasIdentical());
}

INSTANTIATE_TEST_SUITE_P(FabricsAndIndexes, KvWorkloadTest, AllFabricsAndIndexes(), FabricAndIndexName);

}  // namespace
}  // namespace fathom::kv
