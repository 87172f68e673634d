// GET and fetch at the owner (get_at_owner.h, fetch_at_owner.h): their request and answer formats against
// truncation, flipped bytes and lying lengths; on a 3-node cluster over UCX tcp (where the GET asks the
// owner) and shared memory (where it reads one-sided), each index: an out-of-line value in one round trip
// over tcp and two over shared memory, misses, overwrites and deletes, a handle on a resized-away
// generation, what the owner refuses to vouch for, and a malformed request answered "not served"; an
// update in a transaction (on a node thread, or blocking on an application thread) that reads nothing
// itself over tcp, and aborts when what it fetched changed.
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kv/format.h"
#include "kv/get_at_owner.h"
#include "kv/index.h"
#include "kv/kv.h"
#include "kv/kv_cluster_test.h"
#include "kv/table_state.h"
#include "platform/base/mutex.h"
#include "platform/base/status_test_macros.h"

namespace fathom::kv {
namespace {

using Fabric = txn::testing::TestFabric;

object::ObjectRef SomeBucket() {
  object::ObjectRef ref;
  ref.address = memory::GlobalAddress{7, 4096};
  ref.incarnation = 3;
  ref.capacity = 512;
  return ref;
}

TEST(GetAtOwnerFormatTest, RequestRoundTrips) {
  const std::string bytes = EncodeGetAtOwnerRequest(SomeBucket(), 0xabcd1234, "user42");
  ASSERT_OK_AND_ASSIGN(GetAtOwnerRequest request, DecodeGetAtOwnerRequest(bytes));
  EXPECT_EQ(request.bucket, SomeBucket());
  EXPECT_EQ(request.epoch_word, 0xabcd1234u);
  EXPECT_EQ(request.key, "user42");
}

TEST(GetAtOwnerFormatTest, MalformedRequestsAreInvalidArgument) {
  const std::string good = EncodeGetAtOwnerRequest(SomeBucket(), 9, "user42");
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_TRUE(absl::IsInvalidArgument(DecodeGetAtOwnerRequest(good.substr(0, n)).status())) << n << " bytes";
  }
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeGetAtOwnerRequest(good + "x").status()));
  auto with = [&good](size_t at, char byte) {
    std::string bytes = good;
    bytes[at] = byte;
    return DecodeGetAtOwnerRequest(bytes).status();
  };
  EXPECT_TRUE(absl::IsInvalidArgument(with(0, 2))) << "format";
  EXPECT_TRUE(absl::IsInvalidArgument(with(1, 1))) << "reserved";
  EXPECT_TRUE(absl::IsInvalidArgument(with(2, 7))) << "key length says 7 of 6";
  EXPECT_TRUE(absl::IsInvalidArgument(with(2, 5))) << "key length says 5 of 6";
  EXPECT_TRUE(absl::IsInvalidArgument(with(3, 1))) << "key length says 262 of 6";
  EXPECT_TRUE(absl::IsInvalidArgument(with(20, 100))) << "capacity 100 is no slot";
  EXPECT_TRUE(absl::IsInvalidArgument(with(8, 32))) << "offset not on a slot boundary";
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeGetAtOwnerRequest(EncodeGetAtOwnerRequest(SomeBucket(), 9, "")).status()));
  // Any single flipped byte: a request that still makes sense, or InvalidArgument; never anything else.
  for (size_t at = 0; at < good.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bytes = good;
      bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
      absl::Status s = DecodeGetAtOwnerRequest(bytes).status();
      EXPECT_TRUE(s.ok() || absl::IsInvalidArgument(s)) << at << "/" << bit << ": " << s;
    }
  }
}

TEST(GetAtOwnerFormatTest, AnswersRoundTripAndMalformedOnesAreDataLoss) {
  for (const OwnerAnswer& answer : {OwnerAnswer{OwnerAnswerKind::kValue, 0, "v"},
                                    OwnerAnswer{OwnerAnswerKind::kBucket, 77, "bucket bytes"}, OwnerAnswer{}}) {
    const std::string encoded = EncodeOwnerAnswer(answer);  // the decoded bytes point into it
    ASSERT_OK_AND_ASSIGN(OwnerAnswer back, DecodeOwnerAnswer(encoded));
    EXPECT_EQ(back.kind, answer.kind);
    EXPECT_EQ(back.version, answer.version);
    EXPECT_EQ(back.bytes, answer.bytes);
  }
  const std::string value = EncodeOwnerAnswer({OwnerAnswerKind::kValue, 0, "v"});
  for (size_t n = 0; n < kOwnerAnswerHeaderBytes; ++n) {
    EXPECT_TRUE(absl::IsDataLoss(DecodeOwnerAnswer(value.substr(0, n)).status())) << n << " bytes";
  }
  auto with = [](std::string bytes, size_t at, char byte) {
    bytes[at] = byte;
    return DecodeOwnerAnswer(bytes).status();
  };
  EXPECT_TRUE(absl::IsDataLoss(with(value, 0, 0))) << "kind 0";
  EXPECT_TRUE(absl::IsDataLoss(with(value, 0, 4))) << "kind 4";
  EXPECT_TRUE(absl::IsDataLoss(with(value, 1, 2))) << "format";
  EXPECT_TRUE(absl::IsDataLoss(with(value, 3, 1))) << "reserved";
  EXPECT_TRUE(absl::IsDataLoss(with(value, 5, 1))) << "reserved";
  EXPECT_TRUE(absl::IsDataLoss(with(value, 8, 1))) << "a version in a value answer";
  EXPECT_TRUE(absl::IsDataLoss(DecodeOwnerAnswer(EncodeOwnerAnswer({}) + "x").status())) << "bytes after not-served";
}

TEST(GetAtOwnerFormatTest, FetchedObjectsRoundTripAndMalformedOnesAreDataLoss) {
  const object::ObjectRef bucket = SomeBucket();
  object::ObjectRef value_ref;
  value_ref.address = memory::GlobalAddress{7, 8192};
  value_ref.incarnation = 9;
  value_ref.capacity = 1152;
  const std::string bucket_bytes(40, 'b');
  const std::string value_bytes(1000, 'v');
  OwnerObjects with_value{ServedObject{bucket, 5, bucket_bytes}, ServedObject{value_ref, 8, value_bytes}};
  OwnerObjects bucket_only{ServedObject{bucket, 6, bucket_bytes}, std::nullopt};
  for (const OwnerObjects& objects : {with_value, bucket_only}) {
    std::string encoded;
    EncodeOwnerObjects(objects, encoded);
    EXPECT_EQ(encoded.size(), OwnerObjectsBytes(objects));
    ASSERT_OK_AND_ASSIGN(std::optional<OwnerObjects> back, DecodeOwnerObjects(encoded, bucket));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->bucket.ref, bucket);
    EXPECT_EQ(back->bucket.version, objects.bucket.version);
    EXPECT_EQ(back->bucket.payload, bucket_bytes);
    ASSERT_EQ(back->value.has_value(), objects.value.has_value());
    if (back->value.has_value()) {
      EXPECT_EQ(back->value->ref, value_ref);
      EXPECT_EQ(back->value->version, 8u);
      EXPECT_EQ(back->value->payload, value_bytes);
    }
  }
  ASSERT_OK_AND_ASSIGN(std::optional<OwnerObjects> not_served, DecodeOwnerObjects(EncodeOwnerAnswer({}), bucket));
  EXPECT_FALSE(not_served.has_value());

  std::string good;
  EncodeOwnerObjects(with_value, good);
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_TRUE(absl::IsDataLoss(DecodeOwnerObjects(good.substr(0, n), bucket).status())) << n << " bytes";
  }
  EXPECT_TRUE(absl::IsDataLoss(DecodeOwnerObjects(good + "x", bucket).status())) << "trailing bytes";
  auto with = [&good, &bucket](size_t at, char byte) {
    std::string bytes = good;
    bytes[at] = byte;
    return DecodeOwnerObjects(bytes, bucket).status();
  };
  EXPECT_TRUE(absl::IsDataLoss(with(0, 1))) << "a GET's value answer";
  EXPECT_TRUE(absl::IsDataLoss(with(0, 5))) << "kind 5";
  EXPECT_TRUE(absl::IsDataLoss(with(1, 2))) << "format";
  EXPECT_TRUE(absl::IsDataLoss(with(2, 3))) << "unknown flag";
  EXPECT_TRUE(absl::IsDataLoss(with(2, 0))) << "no value flag, but value bytes follow";
  EXPECT_TRUE(absl::IsDataLoss(with(4, 41))) << "bucket length says 41 of 40";
  EXPECT_TRUE(absl::IsDataLoss(with(4, 39))) << "bucket length says 39 of 40";
  EXPECT_TRUE(absl::IsDataLoss(with(7, 1))) << "bucket length beyond the bytes";
  const size_t v = kOwnerAnswerHeaderBytes + bucket_bytes.size();
  EXPECT_TRUE(absl::IsDataLoss(with(v + 12, 100))) << "value capacity 100 is no slot";
  EXPECT_TRUE(absl::IsDataLoss(with(v + 0, 32))) << "value offset not on a slot boundary";
  EXPECT_TRUE(absl::IsDataLoss(with(v + 24, static_cast<char>(0xe9)))) << "value length says 1001 of 1000";
  EXPECT_TRUE(absl::IsDataLoss(with(v + 25, 0))) << "value length says 232 of 1000";
  EXPECT_TRUE(absl::IsDataLoss(with(v + 28, 1))) << "reserved";
  EXPECT_TRUE(absl::IsDataLoss(with(15, static_cast<char>(0x80)))) << "the bucket's version with the lock bit";
  EXPECT_TRUE(absl::IsDataLoss(with(v + 23, static_cast<char>(0x80)))) << "the value's version with the lock bit";
  std::string bytes = good;
  bytes[v + 24] = static_cast<char>(0xff);
  bytes[v + 25] = static_cast<char>(0xff);
  EXPECT_TRUE(absl::IsDataLoss(DecodeOwnerObjects(bytes + std::string(64535, 'v'), bucket).status()))
      << "a value longer than its slot holds";
}

class GetAtOwnerTest : public KvClusterTest {
 protected:
  static constexpr int kKeys = 60;

  static std::string ValueOf(int k, int version = 0) {
    return absl::StrCat("value-", k, "-", version, "-", std::string(200, static_cast<char>('a' + k % 26)));
  }

  // A table whose values live out of line (24 inline bytes), large enough that every key is in its home
  // bucket, with kKeys keys.
  Table Filled(const std::string& name) {
    auto t = Table::Create(txns(1), catalog_, name, With({.buckets = 1024, .inline_bytes = 24}));
    EXPECT_TRUE(t.ok()) << t.status();
    for (int k = 0; k < kKeys; ++k) EXPECT_OK(t->Put(absl::StrCat("key", k), ValueOf(k)));
    return *t;
  }

  // The node serving `key`'s home bucket in the table's current generation.
  uint32_t HomeOwner(const std::string& name, const std::string& key) {
    auto state = LoadState(txns(1), *catalog_.Find(name));
    EXPECT_TRUE(state.ok()) << state.status();
    const object::ObjectRef& home = (*state)->bucket_refs[(*state)->index->Home(KeyHash(key))];
    auto owner = txns(1).replicas()->PrimaryOf(home.address.region);
    EXPECT_TRUE(owner.ok()) << owner.status();
    return owner.ok() ? *owner : 0;
  }

  // `key`'s home bucket in table `name`'s current generation, the node serving it and another node.
  struct OwnedKey {
    std::shared_ptr<TableState> state;
    object::ObjectRef home;
    uint32_t owner = 0;
    uint32_t other = 0;
  };
  absl::StatusOr<OwnedKey> Own(const std::string& name, const std::string& key) {
    absl::StatusOr<std::shared_ptr<TableState>> state = LoadState(txns(1), *catalog_.Find(name));
    if (!state.ok()) return state.status();
    const uint32_t owner = HomeOwner(name, key);
    return OwnedKey{*state, (*state)->bucket_refs[(*state)->index->Home(KeyHash(key))], owner, owner % 3 + 1};
  }

  // The owner's answer to a fetch, computed on `node`'s first thread.
  std::optional<OwnerObjects> ObjectsOn(uint32_t node, const GetAtOwnerRequest& request, size_t limit,
                                        std::string* storage) {
    Notification done;
    EXPECT_OK(txns(node).Post(0, [&](txn::TxnThread& thread) {
      AnswerObjectsAtOwner(thread, request, limit, *storage);
      done.Notify();
    }));
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60)));
    auto answer = DecodeOwnerObjects(*storage, request.bucket);
    EXPECT_TRUE(answer.ok()) << answer.status();
    return answer.ok() ? *answer : std::nullopt;
  }

  // YCSB's update on `node`'s first thread: in one transaction, GET `key`, then PUT `value`; between the
  // two, `between` runs on the thread and calls its argument (on the thread) to go on. The commit's status.
  using Between = std::function<void(std::function<void()> go_on)>;
  absl::Status UpdateOnNodeThread(const Table& t, const std::string& key, const std::string& value, uint32_t node,
                                  Between between = [](std::function<void()> go_on) { go_on(); }) {
    auto done = std::make_shared<Notification>();
    auto result = std::make_shared<absl::Status>();
    EXPECT_OK(txns(node).Post(0, [=](txn::TxnThread& thread) {
      std::shared_ptr<txn::TxState> tx = thread.Begin();
      auto finish = [done, result](absl::Status s) {
        *result = s;
        done->Notify();
      };
      t.GetAsync(thread, tx, key, [=, &thread](absl::StatusOr<std::string> got) {
        if (!got.ok()) {
          thread.Abort(*tx);
          return finish(got.status());
        }
        between([=, &thread] {
          t.PutAsync(thread, tx, key, value, [=, &thread](absl::Status put) {
            if (!put.ok()) {
              thread.Abort(*tx);
              return finish(put);
            }
            thread.Commit(tx, finish);
          });
        });
      });
    }));
    if (!done->WaitForNotificationWithTimeout(absl::Seconds(60))) return absl::DeadlineExceededError("no result");
    return *result;
  }

  // A transaction's operation on a key asks the owner of its home bucket for the bucket and the key's value
  // object (fetch_at_owner.h): over tcp an update reads nothing itself; over shared memory it reads both.
  // `update(t, k)` updates key k of the Filled table t to ValueOf(k, 1) from node 1.
  void ExpectUpdatesFetchFromTheOwner(const std::function<absl::Status(const Table&, int)>& update) {
    Table t = Filled("t");
    int remote = 0;
    ASSERT_OK_AND_ASSIGN(txn::TxnStats before, txns(1).Stats());
    for (int k = 0; k < kKeys; ++k) {
      const absl::Status updated = update(t, k);
      ASSERT_TRUE(updated.ok()) << k << ": " << updated;
      remote += HomeOwner("t", absl::StrCat("key", k)) != 1 ? 1 : 0;
    }
    ASSERT_OK_AND_ASSIGN(txn::TxnStats after, txns(1).Stats());
    const uint64_t reads = after.coordinator.execution_reads - before.coordinator.execution_reads;
    if (fabric() == Fabric::kTcp) {
      EXPECT_EQ(reads, 0u) << "bucket and value came with the owner's answer";
    } else {
      EXPECT_EQ(reads, 2u * remote) << "bucket and value, each read once";
    }
    EXPECT_GE(remote, kKeys / 3) << "buckets spread over the 3 nodes";
    for (int k = 0; k < kKeys; ++k) {
      GetResult got = GetOnNodeThread(t, absl::StrCat("key", k), /*node=*/2);
      ASSERT_TRUE(got.value.ok()) << k << ": " << got.value.status();
      EXPECT_EQ(*got.value, ValueOf(k, 1)) << k;
    }
    ASSERT_OK(cluster_->WaitForQuiescence());
    ASSERT_OK(cluster_->CheckReplicasIdentical());
  }

  // The owner's answer, computed on `node`'s first thread.
  OwnerAnswer AnswerOn(uint32_t node, const GetAtOwnerRequest& request, size_t limit, std::string* storage) {
    Notification done;
    EXPECT_OK(txns(node).Post(0, [&](txn::TxnThread& thread) {
      AnswerAtOwner(thread, request, limit, *storage);
      done.Notify();
    }));
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60)));
    auto answer = DecodeOwnerAnswer(*storage);
    EXPECT_TRUE(answer.ok()) << answer.status();
    return answer.ok() ? *answer : OwnerAnswer{};
  }
};

TEST_P(GetAtOwnerTest, AnOutOfLineValueIsOneRoundTripToTheOwnerOverTcpAndTwoReadsOtherwise) {
  Table t = Filled("t");
  int asked = 0;
  for (int k = 0; k < kKeys; ++k) {
    const std::string key = absl::StrCat("key", k);
    GetResult got = GetOnNodeThread(t, key, /*node=*/1);
    ASSERT_TRUE(got.value.ok()) << key << ": " << got.value.status();
    EXPECT_EQ(*got.value, ValueOf(k)) << key;
    // Node 1 reads its own buckets in place; over tcp it asks the owner of anyone else's.
    const bool ask = fabric() == Fabric::kTcp && HomeOwner("t", key) != 1;
    EXPECT_EQ(got.reads, ask ? 1 : 2) << key;
    asked += ask ? 1 : 0;
  }
  if (fabric() == Fabric::kTcp) {
    EXPECT_GE(asked, kKeys / 3) << "buckets spread over the 3 nodes";
  }
}

TEST_P(GetAtOwnerTest, MissesOverwritesAndDeletesAnswerAsWithoutTheOwner) {
  Table t = Filled("t");
  for (int k = 0; k < 20; ++k) {
    GetResult missing = GetOnNodeThread(t, absl::StrCat("absent", k), /*node=*/2);
    EXPECT_TRUE(absl::IsNotFound(missing.value.status())) << k << ": " << missing.value.status();
  }
  for (int k = 0; k < kKeys; k += 2) ASSERT_OK(t.Put(absl::StrCat("key", k), ValueOf(k, 1)));
  for (int k = 1; k < kKeys; k += 4) ASSERT_OK(t.Delete(absl::StrCat("key", k)));
  for (int k = 0; k < kKeys; ++k) {
    GetResult got = GetOnNodeThread(t, absl::StrCat("key", k), /*node=*/3);
    if (k % 4 == 1) {
      EXPECT_TRUE(absl::IsNotFound(got.value.status())) << k << ": " << got.value.status();
    } else {
      ASSERT_TRUE(got.value.ok()) << k << ": " << got.value.status();
      EXPECT_EQ(*got.value, ValueOf(k, k % 2 == 0 ? 1 : 0)) << k;
    }
  }
}

TEST_P(GetAtOwnerTest, AHandleOnAResizedAwayGenerationGetsTheNewOne) {
  Table t = Filled("t");
  ASSERT_OK_AND_ASSIGN(Table on2, Table::Open(txns(2), catalog_, "t"));  // holds the first generation
  ASSERT_OK(Table::Resize(txns(1), catalog_, "t", {.buckets = 2048}));
  for (int k = 0; k < kKeys; ++k) {
    GetResult got = GetOnNodeThread(on2, absl::StrCat("key", k), /*node=*/2);
    ASSERT_TRUE(got.value.ok()) << k << ": " << got.value.status();
    EXPECT_EQ(*got.value, ValueOf(k)) << k;
  }
}

TEST_P(GetAtOwnerTest, TheOwnerAnswersOnlyWhatItCanVouchFor) {
  Filled("t");
  ASSERT_OK_AND_ASSIGN(OwnedKey owned, Own("t", "key7"));
  const auto& [state, home, owner, other] = owned;
  const std::string key = "key7";
  GetAtOwnerRequest request{home, state->epoch_word(), key};
  std::string storage;

  OwnerAnswer answer = AnswerOn(owner, request, 1 << 16, &storage);
  EXPECT_EQ(answer.kind, OwnerAnswerKind::kValue);
  EXPECT_EQ(answer.bytes, ValueOf(7));

  // Another generation's GET: the bucket, for the GET to see the mismatch itself.
  request.epoch_word = state->epoch_word() + 1;
  answer = AnswerOn(owner, request, 1 << 16, &storage);
  EXPECT_EQ(answer.kind, OwnerAnswerKind::kBucket);
  EXPECT_GT(answer.version, 0u);
  ASSERT_OK_AND_ASSIGN(uint32_t epoch, BucketEpoch(answer.bytes));
  EXPECT_EQ(epoch, state->epoch_word());
  request.epoch_word = state->epoch_word();

  // A key that is not there: the bucket too.
  GetAtOwnerRequest absent = request;
  absent.key = "no such key";
  EXPECT_EQ(AnswerOn(owner, absent, 1 << 16, &storage).kind, OwnerAnswerKind::kBucket);

  // Not served: too large for the reply, not this node's bucket, a stale reference, a lapsed lease.
  EXPECT_EQ(AnswerOn(owner, request, 100, &storage).kind, OwnerAnswerKind::kNotServed);
  EXPECT_EQ(AnswerOn(other, request, 1 << 16, &storage).kind, OwnerAnswerKind::kNotServed);
  GetAtOwnerRequest stale = request;
  ++stale.bucket.incarnation;
  EXPECT_EQ(AnswerOn(owner, stale, 1 << 16, &storage).kind, OwnerAnswerKind::kNotServed);
  lease_lapsed_->store(true);
  EXPECT_EQ(AnswerOn(owner, request, 1 << 16, &storage).kind, OwnerAnswerKind::kNotServed);
  lease_lapsed_->store(false);
}

// A transaction's operation on a key asks the owner for its bucket and value object (fetch_at_owner.h).
TEST_P(GetAtOwnerTest, AnUpdateFetchesItsBucketAndValueFromTheOwnerOverTcp) {
  ExpectUpdatesFetchFromTheOwner([this](const Table& t, int k) {
    return UpdateOnNodeThread(t, absl::StrCat("key", k), ValueOf(k, 1), /*node=*/1);
  });
}

// The blocking API runs the same path (table_tx_async.h): a Get and a Put in a txn::Transaction on an
// application thread fetch from the owner over tcp as the node-thread update above does.
TEST_P(GetAtOwnerTest, ABlockingUpdateFetchesItsBucketAndValueFromTheOwnerOverTcp) {
  ExpectUpdatesFetchFromTheOwner([this](const Table& t, int k) {
    const std::string key = absl::StrCat("key", k);
    return txn::RunTransaction(txns(1), [&](txn::Transaction& tx) -> absl::Status {
      absl::StatusOr<std::string> old = t.Get(tx, key);
      if (!old.ok()) return old.status();
      if (*old != ValueOf(k)) return absl::InternalError(absl::StrCat("read ", *old));
      return t.Put(tx, key, ValueOf(k, 1));
    });
  });
}

// What the owner fetched is a read like any other: a commit after the key changed aborts.
TEST_P(GetAtOwnerTest, AnUpdateOnAFetchedCopyThatChangedSinceAborts) {
  Table t = Filled("t");
  std::string key;
  for (int k = 0; k < kKeys && key.empty(); ++k) {
    if (HomeOwner("t", absl::StrCat("key", k)) == 2) key = absl::StrCat("key", k);
  }
  ASSERT_FALSE(key.empty());
  // Between the update's GET and PUT, node 3 changes the key (from another thread: node 1's keeps polling).
  absl::Status changed = absl::UnknownError("not run");
  ASSERT_OK_AND_ASSIGN(Table on3, Table::Open(txns(3), catalog_, "t"));
  absl::Status update = UpdateOnNodeThread(t, key, "lost", /*node=*/1, [&](std::function<void()> go_on) {
    std::thread([&, go_on] {
      changed = on3.Put(key, "won");
      EXPECT_OK(txns(1).Post(0, [go_on](txn::TxnThread&) { go_on(); }));
    }).detach();
  });
  ASSERT_OK(changed);
  EXPECT_TRUE(absl::IsAborted(update)) << update;
  GetResult got = GetOnNodeThread(t, key, /*node=*/1);
  ASSERT_TRUE(got.value.ok()) << got.value.status();
  EXPECT_EQ(*got.value, "won");
}

TEST_P(GetAtOwnerTest, TheOwnerFetchesOnlyWhatItCanVouchFor) {
  Filled("t");
  ASSERT_OK_AND_ASSIGN(OwnedKey owned, Own("t", "key7"));
  const auto& [state, home, owner, other] = owned;
  const std::string key = "key7";
  GetAtOwnerRequest request{home, state->epoch_word(), key};
  std::string storage;

  std::optional<OwnerObjects> objects = ObjectsOn(owner, request, OwnerObjectsCapacity(home), &storage);
  ASSERT_TRUE(objects.has_value());
  EXPECT_GT(objects->bucket.version, 0u);
  ASSERT_TRUE(objects->value.has_value());
  EXPECT_GT(objects->value->version, 0u);
  ASSERT_OK_AND_ASSIGN(std::string_view value, CheckValueObject(objects->value->payload, key, ValueOf(7).size(), [&] {
                         auto m = FindInBucket(objects->bucket.payload, KeyHash(key), 0);
                         return m.ok() ? m->checksum : std::nullopt;
                       }()));
  EXPECT_EQ(value, ValueOf(7));
  const size_t both = storage.size();

  // The bucket alone: for a key that is not there, another generation, or no room for the value.
  GetAtOwnerRequest absent = request;
  absent.key = "no such key";
  objects = ObjectsOn(owner, absent, OwnerObjectsCapacity(home), &storage);
  ASSERT_TRUE(objects.has_value());
  EXPECT_FALSE(objects->value.has_value());
  GetAtOwnerRequest newer = request;
  newer.epoch_word = state->epoch_word() + 1;
  objects = ObjectsOn(owner, newer, OwnerObjectsCapacity(home), &storage);
  ASSERT_TRUE(objects.has_value());
  EXPECT_FALSE(objects->value.has_value());
  objects = ObjectsOn(owner, request, both - 1, &storage);
  ASSERT_TRUE(objects.has_value());
  EXPECT_FALSE(objects->value.has_value());

  // Not served: no room for the bucket, not this node's bucket, a stale reference, a lapsed lease.
  EXPECT_FALSE(ObjectsOn(owner, request, kOwnerAnswerHeaderBytes + 4, &storage).has_value());
  EXPECT_FALSE(ObjectsOn(other, request, OwnerObjectsCapacity(home), &storage).has_value());
  GetAtOwnerRequest stale = request;
  ++stale.bucket.incarnation;
  EXPECT_FALSE(ObjectsOn(owner, stale, OwnerObjectsCapacity(home), &storage).has_value());
  lease_lapsed_->store(true);
  EXPECT_FALSE(ObjectsOn(owner, request, OwnerObjectsCapacity(home), &storage).has_value());
  lease_lapsed_->store(false);
}

TEST_P(GetAtOwnerTest, AMalformedRequestIsAnsweredNotServed) {
  Filled("t");
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<TableState> state, LoadState(txns(1), *catalog_.Find("t")));
  // A bucket node 2 serves: the call goes to node 2 through the route a GET would take.
  const object::ObjectRef* theirs = nullptr;
  for (const object::ObjectRef& ref : state->bucket_refs) {
    auto owner = txns(1).replicas()->PrimaryOf(ref.address.region);
    if (owner.ok() && *owner == 2) theirs = &ref;
  }
  ASSERT_NE(theirs, nullptr);
  // Served where reads are messages (tcp); refused at once elsewhere.
  for (const std::string& argument : {std::string("not a request"), std::string(1, '\1')}) {
    Notification done;
    absl::StatusOr<std::string> reply;
    ASSERT_OK(txns(1).Post(0, [&](txn::TxnThread& thread) {
      auto route = thread.thread().RouteTo(theirs->address.region);
      if (!route.ok()) {
        reply = route.status();
        return done.Notify();
      }
      absl::Status called = thread.thread().reader().Call(
          *route->endpoint, kGetAtOwnerCall,
          absl::MakeConstSpan(reinterpret_cast<const std::byte*>(argument.data()), argument.size()),
          OwnerAnswerCapacity(*theirs), [&](absl::StatusOr<std::span<const std::byte>> bytes) {
            if (bytes.ok()) {
              reply = std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
            } else {
              reply = bytes.status();
            }
            done.Notify();
          });
      if (!called.ok()) {
        reply = called;
        done.Notify();
      }
    }));
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60)));
    if (fabric() != Fabric::kTcp) {
      EXPECT_TRUE(absl::IsUnimplemented(reply.status())) << reply.status();
      continue;
    }
    ASSERT_TRUE(reply.ok()) << reply.status();
    ASSERT_OK_AND_ASSIGN(OwnerAnswer answer, DecodeOwnerAnswer(*reply));
    EXPECT_EQ(answer.kind, OwnerAnswerKind::kNotServed) << argument;
  }
}

INSTANTIATE_TEST_SUITE_P(
    FabricsAndIndexes, GetAtOwnerTest,
    ::testing::Combine(::testing::Values(Fabric::kTcp, Fabric::kShm),
                       ::testing::Values(IndexKind::kHopscotch, IndexKind::kCuckoo)),
    FabricAndIndexName);

}  // namespace
}  // namespace fathom::kv
