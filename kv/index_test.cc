// The hopscotch index over plain memory (no cluster): a seeded model-based test against std::map, the
// index's invariants after every operation, and how full a table gets before the first insert fails.
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kv/index.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/test_seed.h"

namespace fathom::kv {
namespace {

// Buckets and out-of-line objects in memory; runs an index operation to completion the way the
// transactional driver does (operation.cc), counting the buckets it read.
class MemoryTable {
 public:
  MemoryTable(uint64_t buckets, uint32_t inline_bytes, int max_chain = 4) : index_(buckets, max_chain), buckets_(buckets), inline_(inline_bytes) {}

  absl::StatusOr<std::string> Get(const std::string& key, int* reads = nullptr) {
    Workspace ws;
    ASSIGN_OR_RETURN(Step step, Drive(ws, [&] { return index_.Get(key, KeyHash(key), ws); }));
    if (reads) *reads = static_cast<int>(ws.buckets.size());
    if (!step.status.ok()) return step.status;
    if (step.found->is_inline) return step.found->value;
    const std::string& payload = objects_.at(step.found->ref.address.raw());
    ASSIGN_OR_RETURN(std::string_view v, CheckValueObject(payload, key, step.found->value_bytes, step.found->checksum));
    return std::string(v);
  }

  absl::Status Put(const std::string& key, const std::string& value) {
    Entry e;
    e.hash = KeyHash(key);
    e.key_bytes = static_cast<uint16_t>(key.size());
    e.value_bytes = static_cast<uint32_t>(value.size());
    if (key.size() + value.size() <= inline_) {
      e.key = key;
      e.value = value;
    } else {
      e.is_inline = false;
      const std::string payload = EncodeValueObject(key, value);
      e.ref.address = memory::GlobalAddress{1, static_cast<uint32_t>(64 * next_object_++)};
      e.ref.capacity = 64;
      e.checksum = ValueObjectChecksum(payload);
      objects_[e.ref.address.raw()] = payload;
    }
    Workspace ws;
    ASSIGN_OR_RETURN(Step step, Drive(ws, [&] { return index_.Put(key, e.hash, e, ws); }));
    if (!step.status.ok()) {
      if (!e.is_inline) objects_.erase(e.ref.address.raw());
      return step.status;
    }
    Apply(ws, step);
    return absl::OkStatus();
  }

  absl::Status Delete(const std::string& key) {
    Workspace ws;
    ASSIGN_OR_RETURN(Step step, Drive(ws, [&] { return index_.Delete(key, KeyHash(key), ws); }));
    if (!step.status.ok()) return step.status;
    Apply(ws, step);
    return absl::OkStatus();
  }

  // Every key is in its home bucket or the next one, at most once; spill counts are exact; buckets hold at
  // most 8 entries and encode within the bucket size; out-of-line objects are all referenced.
  void CheckInvariants(const std::map<std::string, std::string>& model) {
    std::vector<int> spilled(buckets_.size(), 0);
    size_t entries = 0;
    size_t pointers = 0;
    for (uint64_t b = 0; b < buckets_.size(); ++b) {
      ASSERT_LE(buckets_[b].entries.size(), size_t{kSlotsPerBucket});
      ASSERT_LE(buckets_[b].EncodedBytes(), kBucketHeaderBytes + kSlotsPerBucket * (kEntryHeaderBytes + inline_));
      for (const Entry& e : buckets_[b].entries) {
        const uint64_t home = index_.Home(e.hash);
        ASSERT_TRUE(b == home || b == index_.Next(home)) << "entry in bucket " << b << " has home " << home;
        if (b != home) ++spilled[home];
        ++entries;
        if (!e.is_inline) ++pointers;
      }
    }
    for (uint64_t b = 0; b < buckets_.size(); ++b) ASSERT_EQ(spilled[b], buckets_[b].spilled) << "bucket " << b;
    ASSERT_EQ(entries, model.size());
    ASSERT_EQ(pointers, objects_.size());
  }

  uint64_t capacity() const { return buckets_.size() * kSlotsPerBucket; }

 private:
  template <typename F>
  absl::StatusOr<Step> Drive(Workspace& ws, F next) {
    for (int round = 0; round < 16; ++round) {
      Step step = next();
      switch (step.kind) {
        case Step::Kind::kNeedBuckets:
          if (step.buckets.empty()) return absl::InternalError("asked for no buckets");
          for (uint64_t b : step.buckets) {
            if (ws.buckets.contains(b)) return absl::InternalError(absl::StrCat("asked twice for bucket ", b));
            // Through the encoding, as the cluster does.
            ASSIGN_OR_RETURN(ws.buckets[b], DecodeBucket(EncodeBucket(buckets_[b])));
          }
          break;
        case Step::Kind::kNeedObject:
          ws.object_payloads[step.object.address.raw()] = objects_.at(step.object.address.raw());
          break;
        case Step::Kind::kDone:
          return step;
      }
    }
    return absl::InternalError("operation needed more than 16 rounds");
  }

  void Apply(Workspace& ws, const Step& step) {
    for (uint64_t b : ws.dirty) buckets_[b] = ws.buckets.at(b);
    for (const object::ObjectRef& ref : step.freed) objects_.erase(ref.address.raw());
  }

  HopscotchIndex index_;
  std::vector<Bucket> buckets_;
  uint32_t inline_;
  std::map<uint64_t, std::string> objects_;
  uint64_t next_object_ = 1;
};

TEST(HopscotchIndexTest, AgreesWithAMapUnderRandomOperations) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  std::mt19937_64 random(seed);
  for (uint64_t buckets : {2, 3, 16, 64}) {
    MemoryTable table(buckets, 40);
    std::map<std::string, std::string> model;
    const int keys = static_cast<int>(buckets * kSlotsPerBucket * 1.2);  // more keys than fit: fills up
    for (int op = 0; op < 4000; ++op) {
      const std::string key = absl::StrCat("k", random() % keys);
      const int what = random() % 10;
      if (what < 5) {
        const std::string value(random() % 3 == 0 ? 100 : random() % 20, static_cast<char>('a' + op % 26));
        absl::Status s = table.Put(key, value);
        if (s.ok()) {
          model[key] = value;
        } else {
          ASSERT_TRUE(absl::IsResourceExhausted(s)) << s;
          ASSERT_FALSE(model.contains(key)) << "an overwrite never needs room";
        }
      } else if (what < 8) {
        absl::StatusOr<std::string> got = table.Get(key);
        if (auto it = model.find(key); it != model.end()) {
          ASSERT_TRUE(got.ok()) << key << ": " << got.status();
          ASSERT_EQ(*got, it->second);
        } else {
          ASSERT_TRUE(absl::IsNotFound(got.status())) << key << ": " << got.status();
        }
      } else {
        absl::Status s = table.Delete(key);
        ASSERT_EQ(s.ok(), model.erase(key) == 1) << s;
      }
      table.CheckInvariants(model);
      if (HasFatalFailure()) return;
    }
    for (const auto& [key, value] : model) {
      ASSERT_OK_AND_ASSIGN(std::string got, table.Get(key));
      ASSERT_EQ(got, value);
    }
  }
}

// How full a table gets before the first insert fails, and how many bucket reads lookups take there
// (the planner's reads; the lock-free GET reads the same buckets). Reported, with a floor well below
// what the design gives so that the test is about regressions, not luck.
TEST(HopscotchIndexTest, FillBeforeTheFirstFailedInsert) {
  for (int chain : {1, 4}) {
  for (uint64_t buckets : {1024, 16384}) {
    MemoryTable table(buckets, 40, chain);
    std::vector<std::string> keys;
    absl::Status s;
    while (s.ok()) {
      keys.push_back(absl::StrCat("key-", keys.size()));
      s = table.Put(keys.back(), "v");
    }
    ASSERT_TRUE(absl::IsResourceExhausted(s)) << s;
    keys.pop_back();
    const double fill = static_cast<double>(keys.size()) / table.capacity();
    int one_read = 0;
    for (const std::string& k : keys) {
      int reads = 0;
      ASSERT_OK(table.Get(k, &reads).status());
      if (reads == 1) ++one_read;
    }
    printf("chain %d: hopscotch, %llu buckets of 8: first failed insert at %.1f%% fill; %.1f%% of lookups read one bucket\n",
           chain, static_cast<unsigned long long>(buckets), 100 * fill, 100.0 * one_read / keys.size());
    // Longer chains add nothing past 4: inserts fail when some home bucket has more than 16 keys, which a
    // neighbourhood of 2 buckets cannot hold (Poisson tail at ~57% fill). Measured: 41-46% (chain 1),
    // 57-58% (chain 4).
    if (chain == 4) {
      EXPECT_GT(fill, 0.50);
    }
  }
  }
}

}  // namespace
}  // namespace fathom::kv
