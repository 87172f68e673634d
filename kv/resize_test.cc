// Table::Resize on a 3-node TxnCluster, over SimFabric (seeded; torn copies on) and UCX shared memory,
// with each index:
//   - random operations against std::map from handles on every node (most of them holding an old
//     generation when a resize happens), with explicit resizes (grow and shrink) and automatic growth in
//     the middle; after each resize every key is in the new generation exactly once;
//   - a GET (lock-free and in a transaction) and a PUT holding the old epoch are rejected by the retired
//     buckets, refetch the table and see the new generation's value (the old buckets are kept alive
//     meanwhile, so without the rejection they would return the stale value);
//   - writes during the copy wait for the new generation; two resizes at once make one table; a resize
//     that cannot publish leaves the table as it was;
//   - bad input: unknown table, impossible sizes, a shrink the entries do not fit (the table is left
//     as it was);
//   - a table whose buckets are larger than its pointers need (format 2's) keeps their size.
// Linearizability during resizes is in kv_workloads_test (recorded histories).
#include <atomic>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kv/kv.h"
#include "kv/kv_cluster_test.h"
#include "kv/table_objects.h"
#include "kv/table_state.h"
#include "platform/base/mutex.h"
#include "platform/base/status_macros.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/test_seed.h"
#include "txn/testing/txn_cluster.h"

namespace fathom::kv {
namespace {

using txn::testing::TxnCluster;
using Fabric = txn::testing::TestFabric;

// Every key stored in the table's current generation, as often as it is stored.
absl::StatusOr<std::multiset<std::string>> StoredKeys(txn::TransactionService& txns, Catalog& catalog,
                                                      std::string_view name) {
  ASSIGN_OR_RETURN(TableInfo info, catalog.Find(name));
  ASSIGN_OR_RETURN(std::shared_ptr<TableState> state, LoadState(txns, info));
  txn::Transaction tx = txns.Begin();
  ASSIGN_OR_RETURN(std::vector<std::string> buckets, tx.ReadMany(state->bucket_refs));
  std::multiset<std::string> keys;
  for (const std::string& bytes : buckets) {
    ASSIGN_OR_RETURN(Bucket bucket, DecodeBucket(bytes));
    if (bucket.epoch != state->epoch_word() || bucket.flags != 0) return absl::InternalError("a bucket out of place");
    for (const Entry& e : bucket.entries) {
      if (e.is_inline) {
        keys.insert(e.key);
        continue;
      }
      ASSIGN_OR_RETURN(std::string payload, tx.Read(e.ref));
      keys.insert(payload.substr(4, e.key_bytes));
    }
  }
  RETURN_IF_ERROR(tx.Commit());
  return keys;
}

class ResizeTest : public KvClusterTest {
 protected:
  // The table holds exactly the model's keys, each once.
  void ExpectStoredKeys(const std::string& name, const std::map<std::string, std::string>& model) {
    ASSERT_OK_AND_ASSIGN(std::multiset<std::string> stored, StoredKeys(txns(2), catalog_, name));
    std::multiset<std::string> expected;
    for (const auto& [key, value] : model) expected.insert(key);
    EXPECT_EQ(stored, expected);
  }

  // Puts key0 .. key<n-1> (value "v") and returns them as a model.
  std::map<std::string, std::string> PutKeys(const Table& t, int n) {
    std::map<std::string, std::string> model;
    for (int i = 0; i < n; ++i) {
      EXPECT_OK(t.Put(absl::StrCat("key", i), "v"));
      model[absl::StrCat("key", i)] = "v";
    }
    return model;
  }
};

TEST_P(ResizeTest, AgreesWithAMapWithResizesInTheMiddle) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  std::mt19937_64 random(seed_);
  ASSERT_OK_AND_ASSIGN(Table created, Table::Create(txns(1), catalog_, "model",
                                                    With({.buckets = 8, .inline_bytes = 64, .grow_at_load = 0.7})));
  // Handles on every node, opened now: each resize leaves all but the resizer's on an old generation.
  const std::vector<Table> tables = OnEveryNode(created);
  ASSERT_EQ(tables.size(), 3u);
  std::map<std::string, std::string> model;
  const int ops = fabric() == Fabric::kSim ? 300 : 600;
  int resizes = 0;
  const uint64_t first_epoch = created.epoch();
  for (int op = 0; op < ops; ++op) {
    const uint32_t node = static_cast<uint32_t>(random() % 3);
    const Table& t = tables[node];
    const std::string key = absl::StrCat("key", random() % 120);
    const int what = static_cast<int>(random() % 20);
    if (what < 10) {
      static constexpr size_t kSizes[] = {0, 10, 40, 300};
      const std::string value = absl::StrCat(key, "@", op, std::string(kSizes[random() % 4], 'v'));
      SCOPED_TRACE(key);
      ASSERT_OK(t.Put(key, value));  // growth makes room
      model[key] = value;
    } else if (what < 15) {
      ASSERT_TRUE(AgreesWithModel(t.Get(key), key, model));
    } else if (what < 19) {
      absl::Status s = t.Delete(key);
      if (model.erase(key) > 0) {
        ASSERT_TRUE(s.ok()) << key << ": " << s;
      } else {
        ASSERT_TRUE(absl::IsNotFound(s)) << key << ": " << s;
      }
    } else {
      // An explicit resize from a random node: grow, or shrink to what the keys need (with slack). Growth
      // stops at 1024 buckets: a seed that drew a dozen grows in a row made 8192, more than the test
      // cluster's memory and than one ReadMany may have outstanding (4096).
      const uint64_t current = tables[node].buckets();
      const uint64_t fit = std::max<uint64_t>(4, model.size() / 4 + 4);
      const bool grow = random() % 2 == 0 && current < 1024;
      const uint64_t buckets = grow ? current * 2 : std::min(current, fit);
      ASSERT_OK(Table::Resize(txns(node + 1), catalog_, "model", {.buckets = buckets, .grace = absl::ZeroDuration()}));
      ++resizes;
      ExpectStoredKeys("model", model);
    }
  }
  ExpectStoredKeys("model", model);
  for (const Table& t : tables) {
    for (const auto& [key, value] : model) {
      ASSERT_OK_AND_ASSIGN(std::string got, t.Get(key));
      ASSERT_EQ(got, value);
    }
  }
  EXPECT_GT(resizes, 5);
  // Explicit resizes (plus any growth): every handle followed the table to its newest generation.
  ASSERT_OK_AND_ASSIGN(TableInfo info, catalog_.Find("model"));
  EXPECT_GE(info.epoch, first_epoch + static_cast<uint64_t>(resizes));
  for (const Table& t : tables) EXPECT_EQ(t.epoch(), info.epoch);
  ASSERT_OK(cluster_->WaitForQuiescence());
  ASSERT_OK(cluster_->CheckReplicasIdentical());
}

// grow_at_load 0.5: the blocking Put doubles the table when the load reaches half (sampled every
// `buckets` puts, the whole table while it has at most 32 buckets): 100 keys end in 32 buckets (39%),
// through 8 and 16; without growth 4 buckets (32 slots) would be full.
TEST_P(ResizeTest, GrowsWhenTheLoadPassesTheThreshold) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "grow", With({.buckets = 4, .grow_at_load = 0.5})));
  ASSERT_OK_AND_ASSIGN(Table other, Table::Open(txns(2), catalog_, "grow"));
  EXPECT_EQ(other.options().grow_at_load, 0.5);  // from the root
  std::map<std::string, std::string> model;
  for (int i = 0; i < 100; ++i) {
    const std::string key = absl::StrCat("key", i);
    ASSERT_OK((i % 2 == 0 ? t : other).Put(key, key));
    model[key] = key;
  }
  ASSERT_OK_AND_ASSIGN(TableInfo info, catalog_.Find("grow"));
  EXPECT_EQ(t.buckets(), 32u);
  EXPECT_EQ(info.epoch, 4u);  // 4 -> 8 -> 16 -> 32
  ExpectStoredKeys("grow", model);
  for (const auto& [key, value] : model) {
    ASSERT_OK_AND_ASSIGN(std::string got, other.Get(key));
    EXPECT_EQ(got, value);
  }
}

// The old buckets are retired but kept (the grace period holds them) while the key changes in the new
// generation: a reader still holding the old epoch would find the old value in them. It must be rejected
// by the epoch word, refetch, and read the new value.
TEST_P(ResizeTest, AnOperationHoldingTheOldEpochIsRejectedAndRetries) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t1, Table::Create(txns(1), catalog_, "epochs", With({.buckets = 8})));
  ASSERT_OK(t1.Put("k", "old"));
  ASSERT_OK(t1.Put("big", std::string(500, 'o')));  // out of line
  ASSERT_OK_AND_ASSIGN(Table held, Table::Open(txns(2), catalog_, "epochs"));
  ASSERT_OK_AND_ASSIGN(Table held_tx, Table::Open(txns(3), catalog_, "epochs"));
  ASSERT_OK_AND_ASSIGN(Table held_put, Table::Open(txns(3), catalog_, "epochs"));
  ASSERT_EQ(held.epoch(), 1u);

  Notification published, release;
  std::thread resizer([&] {
    ResizeOptions options;
    options.sleep = [&](absl::Duration) { release.WaitForNotification(); };  // the grace lasts until released
    options.after_step = [&](std::string_view step) {
      if (step == "published") published.Notify();
    };
    EXPECT_OK(Table::Resize(txns(1), catalog_, "epochs", options));
  });
  published.WaitForNotification();
  ASSERT_OK_AND_ASSIGN(Table fresh, Table::Open(txns(1), catalog_, "epochs"));
  EXPECT_EQ(fresh.epoch(), 2u);
  EXPECT_EQ(fresh.buckets(), 16u);
  ASSERT_OK(fresh.Put("k", "new"));
  ASSERT_OK(fresh.Put("big", std::string(500, 'n')));

  // Lock-free GETs holding epoch 1: the first read hits a retired bucket, then the new generation.
  EXPECT_EQ(held.epoch(), 1u);
  GetResult r = GetOnNodeThread(held, "k", 2);
  ASSERT_OK_AND_ASSIGN(std::string value, r.value);
  EXPECT_EQ(value, "new");
  EXPECT_GE(r.reads, 2) << "the retired bucket was read, then the new one";
  EXPECT_EQ(held.epoch(), 2u);  // the handle moved
  // The thread's next GET starts from the new generation (its view of the handle is taken again:
  // thread_views.h): one read, no retired bucket.
  GetResult again = GetOnNodeThread(held, "k", 2);
  ASSERT_OK_AND_ASSIGN(std::string again_value, again.value);
  EXPECT_EQ(again_value, "new");
  EXPECT_EQ(again.reads, 1);
  // On a thread of another node the table is not bound to, the handle itself serves (no view).
  GetResult elsewhere = GetOnNodeThread(held, "k", 1);
  ASSERT_OK_AND_ASSIGN(std::string elsewhere_value, elsewhere.value);
  EXPECT_EQ(elsewhere_value, "new");
  EXPECT_EQ(elsewhere.reads, 1);
  ASSERT_OK_AND_ASSIGN(std::string big, held.Get("big"));
  EXPECT_EQ(big, std::string(500, 'n'));
  // In a transaction, holding epoch 1.
  txn::Transaction tx = txns(3).Begin();
  ASSERT_OK_AND_ASSIGN(std::string in_tx, held_tx.Get(tx, "k"));
  EXPECT_EQ(in_tx, "new");
  ASSERT_OK(tx.Commit());
  // A PUT holding epoch 1 lands in the new generation.
  EXPECT_EQ(held_put.epoch(), 1u);
  ASSERT_OK(held_put.Put("k", "newer"));
  ASSERT_OK_AND_ASSIGN(std::string after, fresh.Get("k"));
  EXPECT_EQ(after, "newer");

  release.Notify();
  resizer.join();
  // Once freed, a handle still on epoch 1 meets freed buckets (stale references) and refetches too.
  ASSERT_OK_AND_ASSIGN(Table late, Table::Open(txns(2), catalog_, "epochs"));
  ASSERT_OK(Table::Resize(txns(1), catalog_, "epochs", {.grace = absl::ZeroDuration()}));
  ASSERT_OK_AND_ASSIGN(std::string late_value, late.Get("k"));
  EXPECT_EQ(late_value, "newer");
  EXPECT_EQ(late.epoch(), 3u);
}

TEST_P(ResizeTest, WritesDuringTheCopyWaitForTheNewGeneration) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "frozen", With({.buckets = 8})));
  for (int i = 0; i < 20; ++i) ASSERT_OK(t.Put(absl::StrCat("key", i), "before"));
  ASSERT_OK_AND_ASSIGN(Table writer, Table::Open(txns(2), catalog_, "frozen"));
  std::atomic<bool> published{false};
  std::atomic<bool> wrote_before_publish{false};
  std::atomic<bool> get_during_copy_ok{false};
  std::thread write;
  ResizeOptions options;
  options.grace = absl::ZeroDuration();
  options.after_step = [&](std::string_view step) {
    if (step == "frozen") {
      write = std::thread([&] {
        EXPECT_OK(writer.Put("key3", "during"));
        EXPECT_OK(writer.Delete("key4"));
        if (!published.load()) wrote_before_publish = true;
      });
      absl::SleepFor(absl::Milliseconds(20));  // the writer is waiting now
      // Reads go on while the table is frozen.
      auto v = writer.Get("key5");
      get_during_copy_ok = v.ok() && *v == "before";
    }
    if (step == "published") published = true;
  };
  ASSERT_OK(Table::Resize(txns(3), catalog_, "frozen", options));
  write.join();
  EXPECT_FALSE(wrote_before_publish.load()) << "a write finished while the table was frozen";
  EXPECT_TRUE(get_during_copy_ok.load());
  ASSERT_OK_AND_ASSIGN(std::string v3, t.Get("key3"));
  EXPECT_EQ(v3, "during");
  EXPECT_TRUE(absl::IsNotFound(t.Get("key4").status()));
  std::map<std::string, std::string> model;
  for (int i = 0; i < 20; ++i) {
    if (i != 4) model[absl::StrCat("key", i)] = "x";
  }
  ExpectStoredKeys("frozen", model);
}

// A catalog that runs `after_find` once, right after it answers a Find: the moment between reading a
// table's catalog entry and loading the root it names.
class SteppingCatalog final : public Catalog {
 public:
  explicit SteppingCatalog(Catalog& inner) : inner_(inner) {}
  absl::Status Add(const TableInfo& table) override { return inner_.Add(table); }
  absl::StatusOr<TableInfo> Find(std::string_view name) override {
    if (answer_once.has_value()) return *std::exchange(answer_once, std::nullopt);
    absl::StatusOr<TableInfo> found = inner_.Find(name);
    if (after_find) std::exchange(after_find, nullptr)();
    return found;
  }
  absl::Status Remove(std::string_view name) override { return inner_.Remove(name); }
  absl::Status Replace(const TableInfo& expected, const TableInfo& replacement) override {
    return inner_.Replace(expected, replacement);
  }
  absl::StatusOr<std::vector<TableInfo>> List() override { return inner_.List(); }

  std::function<void()> after_find;
  // Answered by the next Find instead of the catalog: a descriptor a resize has replaced since (a
  // catalog answering from a node's copy of the configuration can be that late).
  std::optional<TableInfo> answer_once;

 private:
  Catalog& inner_;
};

// Open finds a generation in the catalog, and a resize publishes a new one and frees the old one before
// Open reads its root: Open loads the new generation. (It failed "freed or reused (stale reference)":
// kv_workloads_test's flake, an appender opening the table while the resizer ran.) The same for a
// handle refetching the table after a resize (TableHandle::Refresh).
TEST_P(ResizeTest, OpenLoadsTheNewGenerationWhenAResizeFreesTheOneItFound) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "racing", With({.buckets = 8})));
  std::map<std::string, std::string> model = PutKeys(t, 10);
  SteppingCatalog stepping(catalog_);
  stepping.after_find = [&] {
    EXPECT_OK(Table::Resize(txns(2), catalog_, "racing", {.buckets = 16, .grace = absl::ZeroDuration()}));
  };
  ASSERT_OK_AND_ASSIGN(Table opened, Table::Open(txns(3), stepping, "racing"));
  EXPECT_EQ(opened.buckets(), 16u);
  ASSERT_OK_AND_ASSIGN(std::string v, opened.Get("key3"));
  EXPECT_EQ(v, "v");

  // A handle on the 16-bucket generation refetches after another resize, which is followed by a third
  // between its Find and its load.
  ASSERT_OK(Table::Resize(txns(2), catalog_, "racing", {.buckets = 32, .grace = absl::ZeroDuration()}));
  auto handle = std::make_shared<TableHandle>(&txns(3), &stepping, LoadState(txns(3), *catalog_.Find("racing")).value());
  ASSERT_OK(Table::Resize(txns(1), catalog_, "racing", {.buckets = 8, .grace = absl::ZeroDuration()}));
  stepping.after_find = [&] {
    EXPECT_OK(Table::Resize(txns(2), catalog_, "racing", {.buckets = 16, .grace = absl::ZeroDuration()}));
  };
  ASSERT_OK_AND_ASSIGN(bool refreshed, handle->Refresh(handle->current()->epoch()));
  EXPECT_TRUE(refreshed);
  EXPECT_EQ(handle->current()->root.buckets, 16u);

  // The same on a node thread (TableHandle::RefreshAsync, the kv lanes' path), with a catalog that names
  // a generation already freed by the next resize.
  auto async_handle = std::make_shared<TableHandle>(&txns(3), &stepping,
                                                    LoadState(txns(3), *catalog_.Find("racing")).value());
  ASSERT_OK(Table::Resize(txns(2), catalog_, "racing", {.buckets = 64, .grace = absl::ZeroDuration()}));
  ASSERT_OK_AND_ASSIGN(TableInfo freed, catalog_.Find("racing"));
  ASSERT_OK(Table::Resize(txns(2), catalog_, "racing", {.buckets = 32, .grace = absl::ZeroDuration()}));
  stepping.answer_once = freed;  // newer than the handle's, and freed by the last resize
  fathom::Notification answered;
  absl::StatusOr<bool> async_refreshed = absl::UnknownError("no answer");
  const uint64_t seen = async_handle->current()->epoch();
  ASSERT_OK(txns(3).Post(0, [&](txn::TxnThread& thread) {
    async_handle->RefreshAsync(thread, seen, [&](absl::StatusOr<bool> r) {
      async_refreshed = r;
      answered.Notify();
    });
  }));
  ASSERT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_OK(async_refreshed.status());
  EXPECT_TRUE(*async_refreshed);
  EXPECT_EQ(async_handle->current()->epoch(), catalog_.Find("racing")->epoch);
  EXPECT_EQ(async_handle->current()->root.buckets, 32u);
  EXPECT_GT(freed.epoch, seen);
  ExpectStoredKeys("racing", model);
}

TEST_P(ResizeTest, ConcurrentResizesMakeOneTable) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "twice", With({.buckets = 8})));
  std::map<std::string, std::string> model = PutKeys(t, 30);
  std::vector<std::thread> resizers;
  for (uint32_t n = 1; n <= 3; ++n) {
    resizers.emplace_back([&, n] { EXPECT_OK(Table::Resize(txns(n), catalog_, "twice", {.buckets = 16})); });
  }
  for (auto& r : resizers) r.join();
  ASSERT_OK_AND_ASSIGN(TableInfo info, catalog_.Find("twice"));
  EXPECT_GE(info.epoch, 2u);
  EXPECT_LE(info.epoch, 4u);
  ExpectStoredKeys("twice", model);
  ASSERT_OK_AND_ASSIGN(std::string v, t.Get("key7"));
  EXPECT_EQ(v, "v");
}

// A resize asked again (its first answer lost) names the generation it meant: it does not resize twice.
TEST_P(ResizeTest, AResizeFromAnEpochRunsOnlyOnThatGeneration) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "once", With({.buckets = 8})));
  ASSERT_OK(Table::Resize(txns(1), catalog_, "once", {.from_epoch = 1}));
  const absl::Status again = Table::Resize(txns(2), catalog_, "once", {.from_epoch = 1});
  EXPECT_TRUE(absl::IsFailedPrecondition(again)) << again;
  EXPECT_THAT(std::string(again.message()), ::testing::HasSubstr("is at epoch 2, not 1"));
  ASSERT_OK_AND_ASSIGN(TableInfo info, catalog_.Find("once"));
  EXPECT_EQ(info.epoch, 2u);
  ASSERT_OK_AND_ASSIGN(Table reopened, Table::Open(txns(2), catalog_, "once"));
  EXPECT_EQ(reopened.buckets(), 16u);
  ASSERT_OK(Table::Resize(txns(2), catalog_, "once", {.from_epoch = 2}));
  ASSERT_OK_AND_ASSIGN(info, catalog_.Find("once"));
  EXPECT_EQ(info.epoch, 3u);
}

TEST_P(ResizeTest, BadInputGetsClearErrors) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  EXPECT_TRUE(absl::IsNotFound(Table::Resize(txns(1), catalog_, "nope")));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "bad", With({.buckets = 8})));
  EXPECT_TRUE(absl::IsInvalidArgument(Table::Resize(txns(1), catalog_, "bad", {.buckets = 1})));
  EXPECT_TRUE(absl::IsInvalidArgument(Table::Resize(txns(1), catalog_, "bad", {.buckets = uint64_t{1} << 33})));
  // Past what a root's directories name (docs/formats/kv.md).
  EXPECT_TRUE(absl::IsInvalidArgument(Table::Resize(txns(1), catalog_, "bad", {.buckets = 65'536'001})));
  EXPECT_TRUE(absl::IsInvalidArgument(
      Table::Create(txns(1), catalog_, "load", With({.buckets = 8, .grow_at_load = 1.5})).status()));
  // A shrink the keys do not fit: ResourceExhausted, and the table goes on as it was.
  std::map<std::string, std::string> model = PutKeys(t, 40);
  EXPECT_TRUE(absl::IsResourceExhausted(Table::Resize(txns(2), catalog_, "bad", {.buckets = 4})));
  EXPECT_EQ(t.epoch(), 1u);
  ASSERT_OK_AND_ASSIGN(TableInfo info, catalog_.Find("bad"));
  EXPECT_EQ(info.epoch, 1u);
  ASSERT_OK(t.Put("key0", "w"));  // not frozen any more
  model["key0"] = "w";
  ExpectStoredKeys("bad", model);
  // A dropped table cannot be resized.
  ASSERT_OK(Table::Drop(txns(1), catalog_, "bad"));
  EXPECT_TRUE(absl::IsNotFound(Table::Resize(txns(1), catalog_, "bad")));
  // Replace compares: a stale descriptor does not publish.
  ASSERT_OK_AND_ASSIGN(Table c, Table::Create(txns(1), catalog_, "cas", With({.buckets = 8})));
  ASSERT_OK_AND_ASSIGN(TableInfo before, catalog_.Find("cas"));
  ASSERT_OK(Table::Resize(txns(1), catalog_, "cas", {.grace = absl::ZeroDuration()}));
  TableInfo replacement = before;
  replacement.epoch = 7;
  EXPECT_TRUE(absl::IsFailedPrecondition(catalog_.Replace(before, replacement)));
  replacement.name = "nope";
  EXPECT_TRUE(absl::IsNotFound(catalog_.Replace(before, replacement)));
  EXPECT_EQ(c.epoch(), 1u);  // this handle has not needed the new generation yet
}

// A catalog whose Replace fails (the coordinator unreachable at the wrong moment).
class UnpublishableCatalog final : public Catalog {
 public:
  explicit UnpublishableCatalog(Catalog* inner) : inner_(inner) {}
  absl::Status Add(const TableInfo& table) override { return inner_->Add(table); }
  absl::StatusOr<TableInfo> Find(std::string_view name) override { return inner_->Find(name); }
  absl::Status Remove(std::string_view name) override { return inner_->Remove(name); }
  absl::Status Replace(const TableInfo&, const TableInfo&) override { return absl::UnavailableError("no quorum"); }
  absl::StatusOr<std::vector<TableInfo>> List() override { return inner_->List(); }

 private:
  Catalog* inner_;
};

// A resize that cannot publish gives the table back as it was: the old buckets are neither retired nor
// frozen, so a handle on it reads and writes without waiting, and nothing is lost.
TEST_P(ResizeTest, AResizeThatCannotPublishLeavesTheTableWorking) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "unpublished", With({.buckets = 8})));
  std::map<std::string, std::string> model = PutKeys(t, 30);
  UnpublishableCatalog failing(&catalog_);
  EXPECT_TRUE(absl::IsUnavailable(Table::Resize(txns(2), failing, "unpublished")));
  EXPECT_EQ(t.epoch(), 1u);
  ASSERT_OK(t.Put("key0", "w"));
  model["key0"] = "w";
  ASSERT_TRUE(AgreesWithModel(t.Get("key0"), "key0", model));
  ExpectStoredKeys("unpublished", model);  // also: every bucket back at epoch 1, not frozen
  // And it can still be resized for real.
  ASSERT_OK(Table::Resize(txns(2), catalog_, "unpublished", {.grace = absl::ZeroDuration()}));
  ASSERT_TRUE(AgreesWithModel(t.Get("key0"), "key0", model));
  EXPECT_EQ(t.epoch(), 2u);
}

// A catalog whose Replace goes through but whose answer is lost, and which then cannot be asked (the
// coordinator unreachable right after the write).
class LostAnswerCatalog final : public Catalog {
 public:
  explicit LostAnswerCatalog(Catalog* inner) : inner_(inner) {}
  absl::Status Add(const TableInfo& table) override { return inner_->Add(table); }
  absl::StatusOr<TableInfo> Find(std::string_view name) override {
    if (replaced_) return absl::UnavailableError("connection loss");
    return inner_->Find(name);
  }
  absl::Status Remove(std::string_view name) override { return inner_->Remove(name); }
  absl::Status Replace(const TableInfo& old, const TableInfo& next) override {
    if (absl::Status s = inner_->Replace(old, next); !s.ok()) return s;
    replaced_ = true;
    return absl::UnavailableError("connection loss");
  }
  absl::StatusOr<std::vector<TableInfo>> List() override { return inner_->List(); }

 private:
  Catalog* inner_;
  bool replaced_ = false;
};

// A publish that went through but whose outcome cannot be learned: the resize says so and frees
// nothing, since the catalog may name the new generation (it does here). Freeing it lost the table.
TEST_P(ResizeTest, APublishWithAnUnknownOutcomeFreesNeitherGeneration) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "unknown", With({.buckets = 8})));
  std::map<std::string, std::string> model = PutKeys(t, 30);
  LostAnswerCatalog lost(&catalog_);
  absl::Status resized = Table::Resize(txns(2), lost, "unknown", {.sleep = [](absl::Duration) {}});
  EXPECT_TRUE(absl::IsUnavailable(resized)) << resized;
  EXPECT_NE(std::string(resized.message()).find("both generations are kept"), std::string::npos) << resized;
  // The catalog names the new generation, and it holds every key.
  for (const auto& [key, value] : model) ASSERT_TRUE(AgreesWithModel(t.Get(key), key, model));
  EXPECT_EQ(t.epoch(), 2u);
  ExpectStoredKeys("unknown", model);
}

// Large inline values make buckets of up to 130 KiB; the copy moves them a few (or one) at a time, as
// a commit's records must fit a ring message. With six 16 KiB buckets per copy transaction this resize
// failed: "message of 18136 bytes exceeds what node 3's ring takes".
TEST_P(ResizeTest, CopiesLargeBucketsFewAtATime) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "large", With({.buckets = 4, .inline_bytes = 2000})));
  std::map<std::string, std::string> model;
  for (int i = 0; i < 28; ++i) {
    const std::string key = absl::StrCat("key", i);
    model[key] = std::string(1970, static_cast<char>('a' + i % 26));
    ASSERT_OK(t.Put(key, model[key]));
  }
  ASSERT_OK(Table::Resize(txns(2), catalog_, "large", {.buckets = 16}));
  ASSERT_OK_AND_ASSIGN(Table reopened, Table::Open(txns(3), catalog_, "large"));
  EXPECT_EQ(reopened.buckets(), 16u);
  for (const auto& [key, value] : model) EXPECT_EQ(t.Get(key).value_or("missing"), value) << key;
  ExpectStoredKeys("large", model);
}

// A table of format 2 recorded buckets sized for its 40-byte checked pointers (384 bytes with 11 inline
// bytes, where this build's pointers need 256): a resize, growing or shrinking, keeps that size, since
// such entries stay 40 bytes when their slots are of older size classes (docs/formats/kv.md, "Bucket").
TEST_P(ResizeTest, KeepsALargerBucketSizeThanItsOwnPointersNeed) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_EQ(BucketCapacity(11), 256u);
  Root root;
  root.kind = kind();
  root.buckets = 8;
  root.epoch = 1;
  root.max_key_bytes = 64;
  root.max_value_bytes = 4096;
  root.inline_bytes = 11;
  root.bucket_capacity = 384;  // as a format 2 table's root records it
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<TableState> built, BuildGeneration(txns(1), "legacy", root));
  ASSERT_OK(catalog_.Add(built->info()));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Open(txns(2), catalog_, "legacy"));
  std::map<std::string, std::string> model;
  for (int i = 0; i < 30; ++i) {
    model[absl::StrCat("key", i)] = std::string(100, static_cast<char>('a' + i % 26));
    ASSERT_OK(t.Put(absl::StrCat("key", i), model[absl::StrCat("key", i)]));
  }
  for (uint64_t buckets : {32u, 16u}) {
    ASSERT_OK(Table::Resize(txns(3), catalog_, "legacy", {.buckets = buckets}));
    ASSERT_OK_AND_ASSIGN(TableInfo info, catalog_.Find("legacy"));
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<TableState> state, LoadState(txns(1), info));
    EXPECT_EQ(state->root.buckets, buckets);
    EXPECT_EQ(state->root.bucket_capacity, 384u) << buckets << " buckets";
    for (const object::ObjectRef& ref : state->bucket_refs) ASSERT_EQ(ref.capacity, 384u) << buckets << " buckets";
    for (const auto& [key, value] : model) EXPECT_EQ(t.Get(key).value_or("missing"), value) << key;
    ExpectStoredKeys("legacy", model);
  }
}

INSTANTIATE_TEST_SUITE_P(FabricsAndIndexes, ResizeTest, AllFabricsAndIndexes(), FabricAndIndexName);

}  // namespace
}  // namespace fathom::kv
