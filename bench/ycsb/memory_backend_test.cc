#include "bench/ycsb/memory_backend.h"

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

Record Account(int64_t balance) { return {{kBalanceField, std::to_string(balance)}, {"owner", "x"}}; }

int64_t BalanceAt(MemoryBackend& db, const std::string& key) {
  Record record;
  EXPECT_TRUE(db.Read("t", key, nullptr, &record).ok()) << key;
  return std::stoll(record.at(kBalanceField));
}

TEST(MemoryBackendTest, ReadsWhatWasWrittenAndUpdatesMergeFields) {
  MemoryStore store;
  MemoryBackend db(&store);
  ASSERT_TRUE(db.Insert("t", "k", {{"a", "1"}, {"b", "2"}}).ok());
  ASSERT_TRUE(db.Update("t", "k", {{"b", "3"}, {"c", "4"}}).ok());
  Record record;
  ASSERT_TRUE(db.Read("t", "k", nullptr, &record).ok());
  EXPECT_EQ(record, (Record{{"a", "1"}, {"b", "3"}, {"c", "4"}}));
  const FieldList only_c = {"c"};
  ASSERT_TRUE(db.Read("t", "k", &only_c, &record).ok());
  EXPECT_EQ(record, (Record{{"c", "4"}}));
  EXPECT_TRUE(absl::IsNotFound(db.Read("t", "missing", nullptr, &record)));
  EXPECT_TRUE(absl::IsNotFound(db.Update("t", "missing", {{"a", "1"}})));
}

TEST(MemoryBackendTest, ScansInKeyOrderAcrossShardsAndSkipsDeletedKeys) {
  MemoryStore store;
  MemoryBackend db(&store);
  for (int i = 99; i >= 0; --i) {  // 100 keys: every shard holds some, inserted out of order
    char key[8];
    snprintf(key, sizeof(key), "k%03d", i);
    ASSERT_TRUE(db.Insert("t", key, {{"i", std::to_string(i)}}).ok());
  }
  ASSERT_TRUE(db.Delete("t", "k011").ok());
  EXPECT_TRUE(absl::IsNotFound(db.Delete("t", "k011")));
  std::vector<Record> records;
  ASSERT_TRUE(db.Scan("t", "k010", 3, nullptr, &records).ok());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].at("i"), "10");
  EXPECT_EQ(records[1].at("i"), "12");
  EXPECT_EQ(records[2].at("i"), "13");
  ASSERT_TRUE(db.Scan("t", "k098", 10, nullptr, &records).ok());
  EXPECT_EQ(records.size(), 2u);
}

TEST(MemoryBackendTest, TransfersConserveMoneyUnderConcurrencyAndRefuseBadAccounts) {
  MemoryStore store;
  MemoryBackend db(&store);
  constexpr int kAccounts = 16;
  for (int i = 0; i < kAccounts; ++i) ASSERT_TRUE(db.Insert("t", "a" + std::to_string(i), Account(100)).ok());
  // Pairs in both directions from several threads: a lock order that depended on the direction would
  // deadlock here, and a lost update would change the total.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&db, t] {
      for (int i = 0; i < 2000; ++i) {
        const int from = (i + t) % kAccounts, to = (i * 7 + 3 * t + 1) % kAccounts;
        if (from == to) continue;
        EXPECT_TRUE(db.Transfer("t", "a" + std::to_string(from), "a" + std::to_string(to), 1).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  int64_t total = 0;
  for (int i = 0; i < kAccounts; ++i) total += BalanceAt(db, "a" + std::to_string(i));
  EXPECT_EQ(total, kAccounts * 100);

  const int64_t before = BalanceAt(db, "a0");
  EXPECT_TRUE(absl::IsNotFound(db.Transfer("t", "a0", "nobody", 5)));
  EXPECT_TRUE(absl::IsInvalidArgument(db.Transfer("t", "a0", "a0", 5)));
  ASSERT_TRUE(db.Insert("t", "no-balance", {{"owner", "y"}}).ok());
  EXPECT_EQ(db.Transfer("t", "a0", "no-balance", 5).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(BalanceAt(db, "a0"), before);
}

}  // namespace
}  // namespace fathom::ycsb
