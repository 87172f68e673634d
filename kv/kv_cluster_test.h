// What the kv tests on a 3-node TxnCluster share: a fixture parameterized by fabric (SimFabric under a
// printed seed, UCX shared memory) and index kind, with a fresh cluster and catalog per test, and the
// test-name suffixes ("ShmHopscotch", "SimCuckoo", ...).
//
//   class MyTest : public KvClusterTest {};
//   TEST_P(MyTest, Works) { ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "t", With({}))); }
//   INSTANTIATE_TEST_SUITE_P(FabricsAndIndexes, MyTest, AllFabricsAndIndexes(), FabricAndIndexName);
#ifndef FATHOM_KV_KV_CLUSTER_TEST_H_
#define FATHOM_KV_KV_CLUSTER_TEST_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kv/kv.h"
#include "platform/base/mutex.h"
#include "platform/fabric/sim/test_seed.h"
#include "txn/testing/txn_cluster.h"

namespace fathom::kv {

using FabricAndIndex = std::tuple<txn::testing::TestFabric, IndexKind>;

inline auto AllFabricsAndIndexes() {
  return ::testing::Combine(::testing::Values(txn::testing::TestFabric::kShm, txn::testing::TestFabric::kSim),
                            ::testing::Values(IndexKind::kHopscotch, IndexKind::kCuckoo));
}

inline std::string FabricAndIndexName(const ::testing::TestParamInfo<FabricAndIndex>& info) {
  return absl::StrCat(txn::testing::TestFabricName(std::get<0>(info.param)),
                      std::get<1>(info.param) == IndexKind::kHopscotch ? "Hopscotch" : "Cuckoo");
}

// A GET's answer for `key` is the model's: its value, or NotFound when the model lacks the key.
inline ::testing::AssertionResult AgreesWithModel(const absl::StatusOr<std::string>& got, const std::string& key,
                                                  const std::map<std::string, std::string>& model) {
  auto it = model.find(key);
  if (it == model.end()) {
    if (absl::IsNotFound(got.status())) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << key << ": expected NotFound, got " << got.status();
  }
  if (!got.ok()) return ::testing::AssertionFailure() << key << ": " << got.status();
  if (*got != it->second) return ::testing::AssertionFailure() << key << ": got " << *got << ", expected " << it->second;
  return ::testing::AssertionSuccess();
}

class KvClusterTest : public ::testing::TestWithParam<FabricAndIndex> {
 protected:
  void SetUp() override {
    seed_ = fabric::sim::TestSeed();
    txn::TxnOptions txn;
    txn.lease_lapsed = [lapsed = lease_lapsed_] { return lapsed->load(); };
    auto cluster = txn::testing::TxnCluster::Start(txn::testing::TestClusterOptions(fabric(), seed_, MemoryBytes()), txn);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  // Each node's memory for objects.
  virtual uint64_t MemoryBytes() const { return 16 << 20; }
  txn::TransactionService& txns(uint32_t node) { return cluster_->service(node); }
  static txn::testing::TestFabric fabric() { return std::get<0>(GetParam()); }
  static IndexKind kind() { return std::get<1>(GetParam()); }
  // `o` with this test's index kind.
  static TableOptions With(TableOptions o) {
    o.kind = kind();
    return o;
  }

  // `created` (made on node 1) and the same table opened on nodes 2 and 3.
  std::vector<Table> OnEveryNode(const Table& created) {
    std::vector<Table> tables = {created};
    for (uint32_t n = 2; n <= 3; ++n) {
      auto t = Table::Open(txns(n), catalog_, created.name());
      EXPECT_TRUE(t.ok()) << t.status();
      if (t.ok()) tables.push_back(*t);
    }
    return tables;
  }

  // A lock-free GET from `node`'s first thread, with its count of reads.
  GetResult GetOnNodeThread(const Table& t, const std::string& key, uint32_t node = 1) {
    auto done = std::make_shared<Notification>();
    auto result = std::make_shared<GetResult>();
    EXPECT_TRUE(txns(node)
                    .Post(0,
                          [t, key, done, result](txn::TxnThread& thread) {
                            t.GetAsync(thread, key, [done, result](GetResult r) {
                              *result = std::move(r);
                              done->Notify();
                            });
                          })
                    .ok());
    if (!done->WaitForNotificationWithTimeout(absl::Seconds(60))) {
      ADD_FAILURE() << "GET of " << key << " gave no result";
      return GetResult{absl::DeadlineExceededError("no result"), 0};
    }
    return *result;
  }

  uint64_t seed_ = 0;
  // What every node's TxnOptions::lease_lapsed says (a test sets it to say the lease lapsed).
  std::shared_ptr<std::atomic<bool>> lease_lapsed_ = std::make_shared<std::atomic<bool>>(false);
  std::unique_ptr<txn::testing::TxnCluster> cluster_;
  InProcessCatalog catalog_;
};

}  // namespace fathom::kv

#endif  // FATHOM_KV_KV_CLUSTER_TEST_H_
