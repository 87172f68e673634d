// kv::Table on a 3-node TxnCluster, over SimFabric (seeded; torn copies on) and UCX shared memory, with
// each index (hopscotch and cuckoo):
// model-based random operations against std::map from every node, transactions over several keys,
// concurrent clients on all nodes (no lost keys; final state equals the model of committed operations),
// a full table, bad input, and the catalog.
#include <map>
#include <optional>
#include <random>
#include <atomic>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kv/index.h"
#include "kv/format.h"
#include "kv/kv.h"
#include "kv/kv_cluster_test.h"
#include "kv/table_objects.h"
#include "platform/base/mutex.h"
#include "platform/base/status_macros.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/test_seed.h"
#include "txn/testing/txn_cluster.h"

namespace fathom::kv {
namespace {

using txn::testing::TxnCluster;

using Fabric = txn::testing::TestFabric;

class TableTest : public KvClusterTest {
 protected:
  // A value that names its key and version, so a reader can tell a value from a mix of two.
  static std::string ValueFor(const std::string& key, int version, size_t size) {
    std::string v = absl::StrCat(key, "#", version, "#");
    while (v.size() < size) v.push_back(static_cast<char>('a' + (v.size() + version) % 26));
    v.resize(std::max(size, v.size()));
    return v;
  }

  void CheckReplicas() {
    ASSERT_OK(cluster_->WaitForQuiescence());
    ASSERT_OK(cluster_->CheckReplicasIdentical());
  }
};

// FaRM's "no lease, no service": once this node's lease lapsed the CM may have moved the region away (a
// partition), so a lock-free GET refuses to answer, a miss included, rather than answer stale.
TEST_P(TableTest, ALockFreeGetAfterTheLeaseLapsedIsRefused) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "lapse", With({.buckets = 16, .inline_bytes = 64})));
  ASSERT_OK(t.Put("here", "v"));
  ASSERT_OK(GetOnNodeThread(t, "here").value.status());
  EXPECT_TRUE(absl::IsNotFound(GetOnNodeThread(t, "absent").value.status()));
  lease_lapsed_->store(true);
  for (const char* key : {"here", "absent"}) {
    const absl::Status s = GetOnNodeThread(t, key).value.status();
    EXPECT_TRUE(absl::IsUnavailable(s)) << key << ": " << s;
    EXPECT_NE(std::string(s.message()).find("lease lapsed"), std::string::npos) << s;
  }
  lease_lapsed_->store(false);
  EXPECT_OK(GetOnNodeThread(t, "here").value.status());
}

TEST_P(TableTest, AgreesWithAMapUnderRandomOperationsFromEveryNode) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  std::mt19937_64 random(seed_);
  ASSERT_OK_AND_ASSIGN(Table created, Table::Create(txns(1), catalog_, "model", With({.buckets = 16, .inline_bytes = 64})));
  const std::vector<Table> tables = OnEveryNode(created);
  ASSERT_EQ(tables.size(), 3u);
  std::map<std::string, std::string> model;
  const int ops = fabric() == Fabric::kSim ? 300 : 600;
  for (int op = 0; op < ops; ++op) {
    const Table& t = tables[random() % 3];
    const std::string key = absl::StrCat("key", random() % 150);
    const int what = random() % 10;
    if (what < 5) {
      static constexpr size_t kSizes[] = {0, 10, 50, 300, 5000};
      const std::string value = ValueFor(key, op, kSizes[random() % 5]);
      absl::Status s = t.Put(key, value);
      if (s.ok()) {
        model[key] = value;
      } else {
        ASSERT_TRUE(absl::IsResourceExhausted(s)) << s;
        ASSERT_FALSE(model.contains(key));
      }
    } else if (what < 8) {
      ASSERT_TRUE(AgreesWithModel(t.Get(key), key, model));
    } else {
      absl::Status s = t.Delete(key);
      ASSERT_EQ(s.ok(), model.erase(key) == 1) << key << ": " << s;
      if (!s.ok()) {
        ASSERT_TRUE(absl::IsNotFound(s)) << s;
      }
    }
  }
  for (const Table& t : tables) {
    for (const auto& [key, value] : model) {
      ASSERT_OK_AND_ASSIGN(std::string got, t.Get(key));
      ASSERT_EQ(got, value);
      // The transactional read agrees with the lock-free one.
      txn::Transaction tx = txns(1).Begin();
      ASSERT_OK_AND_ASSIGN(std::string in_tx, created.Get(tx, key));
      ASSERT_EQ(in_tx, value);
      ASSERT_OK(tx.Commit());
    }
  }
  CheckReplicas();
}

TEST_P(TableTest, SeveralKeysChangeAtomicallyInOneTransaction) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "tx", With({.buckets = 8})));
  ASSERT_OK(t.Put("from", "payload"));
  ASSERT_OK(txn::RunTransaction(txns(2), [&](txn::Transaction& tx) -> absl::Status {
    ASSIGN_OR_RETURN(std::string v, t.Get(tx, "from"));
    RETURN_IF_ERROR(t.Put(tx, "to", v + "!"));
    RETURN_IF_ERROR(t.Put(tx, "big", std::string(4000, 'x')));
    return t.Delete(tx, "from");
  }));
  EXPECT_TRUE(absl::IsNotFound(t.Get("from").status()));
  ASSERT_OK_AND_ASSIGN(std::string to, t.Get("to"));
  EXPECT_EQ(to, "payload!");
  ASSERT_OK_AND_ASSIGN(std::string big, t.Get("big"));
  EXPECT_EQ(big, std::string(4000, 'x'));
  // An aborted transaction changes nothing, and its out-of-line object is given back.
  {
    txn::Transaction tx = txns(3).Begin();
    ASSERT_OK(t.Put(tx, "ghost", std::string(3000, 'g')));
    ASSERT_OK(t.Delete(tx, "to"));
    tx.Abort();
  }
  EXPECT_TRUE(absl::IsNotFound(t.Get("ghost").status()));
  ASSERT_OK(t.Get("to").status());
  CheckReplicas();
}

TEST_P(TableTest, ConcurrentClientsOnEveryNodeLoseNothing) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  // Few buckets, so clients of different nodes contend for the same buckets.
  ASSERT_OK_AND_ASSIGN(Table t1, Table::Create(txns(1), catalog_, "shared", With({.buckets = 8, .inline_bytes = 64})));
  const int ops = fabric() == Fabric::kSim ? 60 : 150;
  std::vector<std::map<std::string, std::string>> models(3);
  std::vector<std::string> failures(3);
  std::vector<std::thread> clients;
  for (uint32_t n = 1; n <= 3; ++n) {
    clients.emplace_back([&, n] {
      auto t = Table::Open(txns(n), catalog_, "shared");
      if (!t.ok()) {
        failures[n - 1] = t.status().ToString();
        return;
      }
      std::mt19937_64 random(seed_ * 7 + n);
      auto& model = models[n - 1];
      for (int op = 0; op < ops && failures[n - 1].empty(); ++op) {
        const std::string key = absl::StrCat("n", n, "-", random() % 8);  // each client owns its keys
        if (random() % 4 == 0) {
          absl::Status s = t->Delete(key);
          if (s.ok() != (model.erase(key) == 1)) failures[n - 1] = absl::StrCat("delete ", key, ": ", s.ToString());
        } else {
          const std::string value = ValueFor(key, op, random() % 2 ? 20 : 200);
          absl::Status s = t->Put(key, value);
          if (!s.ok()) failures[n - 1] = absl::StrCat("put ", key, ": ", s.ToString());
          model[key] = value;
        }
        // Read your own writes, and others' keys only ever hold whole values of theirs.
        absl::StatusOr<std::string> mine = t->Get(key);
        auto it = model.find(key);
        if (it == model.end() ? !absl::IsNotFound(mine.status()) : (!mine.ok() || *mine != it->second)) {
          failures[n - 1] = absl::StrCat("get ", key, ": ", mine.ok() ? *mine : mine.status().ToString());
        }
        const std::string other = absl::StrCat("n", 1 + random() % 3, "-", random() % 8);
        absl::StatusOr<std::string> theirs = t->Get(other);
        if (theirs.ok() ? theirs->rfind(other + "#", 0) != 0 : !absl::IsNotFound(theirs.status())) {
          failures[n - 1] = absl::StrCat("get ", other, ": ", theirs.ok() ? *theirs : theirs.status().ToString());
        }
      }
    });
  }
  for (std::thread& c : clients) c.join();
  for (const std::string& f : failures) EXPECT_EQ(f, "");
  // The final state is the union of what every client committed last.
  for (uint32_t n = 1; n <= 3; ++n) {
    for (int k = 0; k < 8; ++k) {
      const std::string key = absl::StrCat("n", n, "-", k);
      absl::StatusOr<std::string> got = t1.Get(key);
      auto it = models[n - 1].find(key);
      if (it == models[n - 1].end()) {
        EXPECT_TRUE(absl::IsNotFound(got.status())) << key << ": " << got.status();
      } else {
        ASSERT_TRUE(got.ok()) << key << ": " << got.status();
        EXPECT_EQ(*got, it->second) << key;
      }
    }
  }
  CheckReplicas();
}

TEST_P(TableTest, AsyncClientsOnNodeThreads) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t1, Table::Create(txns(1), catalog_, "async", With({.buckets = 32})));
  // Every node thread puts its own keys with several in flight, then reads them back.
  struct Tally {
    absl::Mutex mu;
    int left ABSL_GUARDED_BY(mu) = 0;
    std::string failure ABSL_GUARDED_BY(mu);
  };
  auto tally = std::make_shared<Tally>();
  constexpr int kKeys = 20;
  std::vector<Table> tables;
  for (uint32_t n = 1; n <= 3; ++n) {
    ASSERT_OK_AND_ASSIGN(Table t, Table::Open(txns(n), catalog_, "async"));
    tables.push_back(t);
  }
  {
    MutexLock lock(&tally->mu);
    tally->left = 3 * 2 * kKeys;
  }
  for (uint32_t n = 1; n <= 3; ++n) {
    for (int thread = 0; thread < 2; ++thread) {
      Table t = tables[n - 1];
      ASSERT_OK(txns(n).Post(thread, [t, n, thread, tally](txn::TxnThread& th) {
        for (int k = 0; k < kKeys; ++k) {
          const std::string key = absl::StrCat("a", n, ".", thread, ".", k);
          const std::string value = ValueFor(key, k, k % 2 ? 16 : 400);
          t.PutAsync(th, key, value, [t, &th, key, value, tally](absl::Status s) {
            auto report = [tally](std::string failure) {
              MutexLock lock(&tally->mu);
              if (!failure.empty() && tally->failure.empty()) tally->failure = failure;
              --tally->left;
            };
            if (!s.ok()) return report(absl::StrCat("put ", key, ": ", s.ToString()));
            t.GetAsync(th, key, [key, value, report, kind = t.kind()](GetResult r) {
              if (!r.value.ok() || *r.value != value) return report(absl::StrCat("get ", key, ": ", r.value.status().ToString()));
              // The buckets the index may read (no retries here: nobody moves these keys during the
              // reads) and the out-of-line value.
              const int most = (kind == IndexKind::kHopscotch ? kHopscotchReach : 3) + 1;
              if (r.reads < 1 || r.reads > most) return report(absl::StrCat("get ", key, " took ", r.reads, " reads"));
              report("");
            });
          });
        }
      }));
    }
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (true) {
    {
      MutexLock lock(&tally->mu);
      if (tally->left == 0) break;
    }
    ASSERT_LT(absl::Now(), deadline) << "async clients did not finish";
    absl::SleepFor(absl::Milliseconds(5));
  }
  MutexLock lock(&tally->mu);
  EXPECT_EQ(tally->failure, "");
}

// Names whose home bucket (hopscotch, `buckets` buckets) is `home`, skipping those in `taken`.
std::vector<std::string> KeysWithHome(uint64_t buckets, uint64_t home, int count, const std::string& prefix) {
  HopscotchIndex index(buckets);
  std::vector<std::string> keys;
  for (int i = 0; static_cast<int>(keys.size()) < count; ++i) {
    std::string key = absl::StrCat(prefix, i);
    if (index.Home(KeyHash(key)) == home) keys.push_back(std::move(key));
  }
  return keys;
}

// A lock-free GET reads a key's home bucket, then the bucket its spill bits name; a key moved between
// those two reads (forward, to a bucket the first read did not name) is in neither copy. The GET must
// notice (its miss is validated) and find the key, never say NotFound. The move is forced between the
// reads: bucket 0 holds 8 keys of home 0, so K (home 0) lives in bucket 1, which then fills with keys of
// home 1; the GET of K pauses after reading bucket 0 while one more key of home 1 is put, which moves
// the guest K on to bucket 2 to take its slot.
TEST_P(TableTest, ALockFreeGetFindsAKeyMovedBetweenItsReads) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  if (kind() != IndexKind::kHopscotch) GTEST_SKIP() << "the layout below is hopscotch's";
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "race", With({.buckets = 4})));
  for (const std::string& key : KeysWithHome(4, 0, 8, "zero")) ASSERT_OK(t.Put(key, "0"));
  const std::string k = KeysWithHome(4, 0, 9, "zero").back();
  ASSERT_OK(t.Put(k, "the value"));
  const std::vector<std::string> ones = KeysWithHome(4, 1, 8, "one");
  for (int i = 0; i < 7; ++i) ASSERT_OK(t.Put(ones[i], "1"));
  std::atomic<bool> moved{false};
  Table paused = t;
  paused.SetGetPauseForTesting([t, last = ones[7], &moved](txn::TxnThread& thread, std::function<void()> resume) {
    t.PutAsync(thread, last, "1", [&moved, resume](absl::Status s) {
      EXPECT_OK(s);
      moved = s.ok();
      resume();
    });
  });
  ASSERT_OK_AND_ASSIGN(std::string got, paused.Get(k));
  EXPECT_EQ(got, "the value");
  EXPECT_TRUE(moved.load());
  // And the key did move: a fresh GET finds it in bucket 2, reading buckets 0 and 2.
  GetResult fresh = GetOnNodeThread(t, k);
  ASSERT_OK_AND_ASSIGN(std::string again, fresh.value);
  EXPECT_EQ(again, "the value");
  EXPECT_EQ(fresh.reads, 2);
}

// The same race in a cuckoo table of 4 buckets: K's first candidate A is full when K is put, so K lives
// in its second, B; then every bucket fills up except one free slot in A. The GET of K pauses after
// reading A while X (candidates B, C, D: all full; B first) is put: the displacement path moves K, the
// first entry of B, to its free candidate A, and X takes K's slot. The GET then misses in B and in K's
// third candidate, and must not say NotFound.
TEST_P(TableTest, ALockFreeGetFindsAKeyCuckooedBetweenItsReads) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  if (kind() != IndexKind::kCuckoo) GTEST_SKIP() << "the layout below is cuckoo's";
  const CuckooIndex index(4);
  auto find = [&](const std::string& prefix, int count, auto wanted) {
    std::vector<std::string> keys;
    for (int i = 0; static_cast<int>(keys.size()) < count; ++i) {
      std::string key = absl::StrCat(prefix, i);
      if (wanted(index.Candidates(KeyHash(key)))) keys.push_back(std::move(key));
    }
    return keys;
  };
  const uint64_t a = 0;
  const std::string k = find("k", 1, [&](auto c) { return c[0] == a; })[0];
  const uint64_t b = index.Candidates(KeyHash(k))[1];
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "race", With({.buckets = 4})));
  const std::vector<std::string> in_a = find("a", 8, [&](auto c) { return c[0] == a; });
  for (const std::string& key : in_a) ASSERT_OK(t.Put(key, "a"));
  ASSERT_OK(t.Put(k, "the value"));  // A is full: K goes to B, as B's first entry
  for (uint64_t bucket = 0; bucket < 4; ++bucket) {
    if (bucket == a) continue;
    for (const std::string& key : find(absl::StrCat("f", bucket, "-"), bucket == b ? 7 : 8,
                                       [&](auto c) { return c[0] == bucket; })) {
      ASSERT_OK(t.Put(key, "f"));
    }
  }
  ASSERT_OK(t.Delete(in_a[0]));  // one free slot, in A
  const std::string x = find("x", 1, [&](auto c) { return c[0] == b && c[1] != a && c[2] != a; })[0];
  std::atomic<bool> moved{false};
  Table paused = t;
  paused.SetGetPauseForTesting([t, x, &moved](txn::TxnThread& thread, std::function<void()> resume) {
    t.PutAsync(thread, x, "x", [&moved, resume](absl::Status s) {
      EXPECT_OK(s);
      moved = s.ok();
      resume();
    });
  });
  ASSERT_OK_AND_ASSIGN(std::string got, paused.Get(k));
  EXPECT_EQ(got, "the value");
  EXPECT_TRUE(moved.load());
  // K did move to A: one read finds it now.
  GetResult fresh = GetOnNodeThread(t, k);
  ASSERT_OK_AND_ASSIGN(std::string again, fresh.value);
  EXPECT_EQ(again, "the value");
  EXPECT_EQ(fresh.reads, 1);
  ASSERT_OK_AND_ASSIGN(std::string xv, t.Get(x));
  EXPECT_EQ(xv, "x");
}

TEST_P(TableTest, AFullTableSaysResourceExhaustedAndKeepsItsKeys) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  // The smallest table of each kind: 2 buckets (hopscotch), 3 (cuckoo).
  const uint64_t buckets = kind() == IndexKind::kHopscotch ? 2 : 3;
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "tiny", With({.buckets = buckets})));
  std::vector<std::string> stored;
  absl::Status s;
  for (int i = 0; i < 100 && s.ok(); ++i) {
    const std::string key = absl::StrCat("k", i);
    s = t.Put(key, key);
    if (s.ok()) stored.push_back(key);
  }
  ASSERT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_LE(stored.size(), buckets * kSlotsPerBucket);
  EXPECT_GE(stored.size(), buckets * kSlotsPerBucket / 2) << "displacement fills a tiny table well";
  for (const std::string& key : stored) {
    ASSERT_OK_AND_ASSIGN(std::string v, t.Get(key));
    EXPECT_EQ(v, key);
  }
  // Overwrites and deletes still work, and a delete makes room.
  ASSERT_OK(t.Put(stored[0], "new"));
  ASSERT_OK(t.Delete(stored[1]));
  ASSERT_OK(t.Put("fits-now", "x"));
}

// A table whose values all go out of line has buckets of 8 pointers of 27 bytes in 256-byte slots: filled
// to the last slot, every value is still read back, by the transactional and the lock-free GET.
TEST_P(TableTest, BucketsOfPointersFillTheirSlotsOf256Bytes) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_EQ(BucketCapacity(kInlineBytesOfAPointer), 256u);
  const uint64_t buckets = kind() == IndexKind::kHopscotch ? 2 : 3;
  ASSERT_OK_AND_ASSIGN(Table t, Table::Create(txns(1), catalog_, "pointers",
                                              With({.buckets = buckets, .inline_bytes = kInlineBytesOfAPointer})));
  std::vector<std::string> stored;
  absl::Status s;
  for (int i = 0; i < 100 && s.ok(); ++i) {
    const std::string key = absl::StrCat("key-", i);
    s = t.Put(key, ValueFor(key, 0, 100 + 37 * i));
    if (s.ok()) stored.push_back(key);
  }
  ASSERT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_GE(stored.size(), buckets * kSlotsPerBucket / 2);
  for (const std::string& key : stored) {
    const int i = std::stoi(key.substr(4));
    ASSERT_OK_AND_ASSIGN(std::string v, t.Get(key));
    EXPECT_EQ(v, ValueFor(key, 0, 100 + 37 * i));
    EXPECT_EQ(GetOnNodeThread(t, key).value.value_or(""), v) << key;
  }
  // A new value for a key replaces its object (the old one is freed): still one pointer, still found.
  ASSERT_OK(t.Put(stored[0], ValueFor(stored[0], 1, 2000)));
  EXPECT_EQ(GetOnNodeThread(t, stored[0]).value.value_or(""), ValueFor(stored[0], 1, 2000));
  CheckReplicas();
}

TEST_P(TableTest, BadInputGetsClearErrors) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table t,
                       Table::Create(txns(1), catalog_, "limits", With({.buckets = 4, .max_key_bytes = 16, .max_value_bytes = 100})));
  absl::Status s = t.Put("", "v");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(std::string(s.message()).find("empty"), std::string::npos) << s;
  s = t.Put(std::string(17, 'k'), "v");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(std::string(s.message()).find("limit of 16"), std::string::npos) << s;
  s = t.Put("k", std::string(101, 'v'));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(std::string(s.message()).find("limit of 100"), std::string::npos) << s;
  EXPECT_TRUE(absl::IsInvalidArgument(t.Get("").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(t.Delete(std::string(17, 'k'))));
  EXPECT_TRUE(absl::IsNotFound(t.Get("absent").status()));
  EXPECT_TRUE(absl::IsNotFound(t.Delete("absent")));
  ASSERT_OK(t.Put(std::string(16, 'k'), std::string(100, 'v')));  // the limits themselves are fine

  s = Table::Open(txns(2), catalog_, "nope").status();
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_NE(std::string(s.message()).find("nope"), std::string::npos) << s;
  EXPECT_TRUE(absl::IsAlreadyExists(Table::Create(txns(2), catalog_, "limits").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Table::Create(txns(1), catalog_, "").status()));
  // The control service's name rule: a table made here must list like one made by fathomctl.
  for (const char* name : {"a/b", ".hidden", "with space", "tab\tle"}) {
    const absl::Status s = Table::Create(txns(1), catalog_, name).status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << name << ": " << s;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(Table::Create(txns(1), catalog_, "one", With({.buckets = 1})).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      Table::Create(txns(1), catalog_, "c2", {.kind = IndexKind::kCuckoo, .buckets = 2}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      Table::Create(txns(1), catalog_, "k9", {.kind = static_cast<IndexKind>(9)}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      Table::Create(txns(1), catalog_, "huge", With({.max_key_bytes = 1024, .max_value_bytes = 1 << 20})).status()));
  // Inline entries so large that a bucket would not fit one message: refused at create, not at a PUT.
  s = Table::Create(txns(1), catalog_, "wide", With({.buckets = 4, .inline_bytes = kMaxInlineBytes + 1})).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  ASSERT_OK_AND_ASSIGN(Table widest,
                       Table::Create(txns(1), catalog_, "widest", With({.buckets = 4, .inline_bytes = kMaxInlineBytes})));
  ASSERT_OK(widest.Put("k", std::string(kMaxInlineBytes - 8, 'v')));
  ASSERT_OK_AND_ASSIGN(std::string value, widest.Get("k"));
  EXPECT_EQ(value.size(), kMaxInlineBytes - 8);
}

TEST_P(TableTest, TablesAreListedOpenedAnywhereAndDropped) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  ASSERT_OK_AND_ASSIGN(Table a, Table::Create(txns(1), catalog_, "a", With({.buckets = 4})));
  ASSERT_OK_AND_ASSIGN(Table b, Table::Create(txns(2), catalog_, "b", With({.buckets = 4})));
  ASSERT_OK(a.Put("k", std::string(2000, 'v')));  // out of line: Drop frees it too
  ASSERT_OK(b.Put("k", "in b"));
  ASSERT_OK_AND_ASSIGN(std::vector<TableInfo> list, catalog_.List());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].name, "a");
  EXPECT_EQ(list[1].name, "b");
  ASSERT_OK_AND_ASSIGN(Table a3, Table::Open(txns(3), catalog_, "a"));
  EXPECT_EQ(a3.buckets(), 4u);
  EXPECT_EQ(a3.kind(), kind());  // the kind comes from the catalog and the root
  ASSERT_OK_AND_ASSIGN(std::string v, a3.Get("k"));
  EXPECT_EQ(v.size(), 2000u);
  ASSERT_OK(Table::Drop(txns(3), catalog_, "a"));
  EXPECT_TRUE(absl::IsNotFound(Table::Open(txns(1), catalog_, "a").status()));
  EXPECT_TRUE(absl::IsNotFound(Table::Drop(txns(1), catalog_, "a")));
  ASSERT_OK_AND_ASSIGN(std::string in_b, b.Get("k"));
  EXPECT_EQ(in_b, "in b");
  CheckReplicas();
}

INSTANTIATE_TEST_SUITE_P(FabricsAndIndexes, TableTest, AllFabricsAndIndexes(), FabricAndIndexName);

}  // namespace
}  // namespace fathom::kv
