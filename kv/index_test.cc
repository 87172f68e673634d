// Both indexes over plain memory (no cluster): a seeded model-based test against std::map, each index's
// invariants after every operation, how full a table gets before the first insert fails, and how many
// bucket reads a lock-free GET needs at 50%, 75% and 90% fill.
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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
  MemoryTable(IndexKind kind, uint64_t buckets, uint32_t inline_bytes)
      : kind_(kind), index_(*MakeIndex(kind, buckets)), buckets_(buckets), inline_(inline_bytes) {}

  // The buckets the lock-free GET (table_async.cc) reads for `key`, stopping at the first hit: the first
  // bucket, then those MoreBuckets names, in order. 0 if the key is in none of them.
  int LockFreeReads(const std::string& key, bool* found) {
    const uint64_t hash = KeyHash(key);
    std::vector<uint64_t> order = {index_->Home(hash)};
    const std::string home = EncodeBucket(buckets_[order[0]]);
    auto more = index_->MoreBuckets(hash, home);
    EXPECT_TRUE(more.ok()) << more.status();
    if (more.ok()) order.insert(order.end(), more->begin(), more->end());
    *found = false;
    for (size_t i = 0; i < order.size(); ++i) {
      for (const Entry& e : buckets_[order[i]].entries) {
        if (e.hash != hash) continue;
        if (e.is_inline ? e.key == key
                        : objects_.at(e.ref.address.raw()).substr(4, key.size()) == key) {
          *found = true;
          return static_cast<int>(i + 1);
        }
      }
    }
    return static_cast<int>(order.size());
  }

  absl::StatusOr<std::string> Get(const std::string& key, int* reads = nullptr) {
    Workspace ws;
    ASSIGN_OR_RETURN(Step step, Drive(ws, [&] { return index_->Get(key, KeyHash(key), ws); }));
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
    ASSIGN_OR_RETURN(Step step, Drive(ws, [&] { return index_->Put(key, e.hash, e, ws); }));
    if (!step.status.ok()) {
      if (!e.is_inline) objects_.erase(e.ref.address.raw());
      return step.status;
    }
    Apply(ws, step);
    return absl::OkStatus();
  }

  absl::Status Delete(const std::string& key) {
    Workspace ws;
    ASSIGN_OR_RETURN(Step step, Drive(ws, [&] { return index_->Delete(key, KeyHash(key), ws); }));
    if (!step.status.ok()) return step.status;
    Apply(ws, step);
    return absl::OkStatus();
  }

  // Hopscotch: every key within reach of its home bucket, spill bits exact. Cuckoo: every key in one of
  // its candidates, no spill bits. Both: each key once, buckets hold at most 8 entries and encode within
  // the bucket size, every bucket passes the index's own check, out-of-line objects are all referenced.
  void CheckInvariants(const std::map<std::string, std::string>& model) {
    std::vector<uint8_t> spilled(buckets_.size(), 0);
    std::set<std::pair<uint64_t, std::string>> keys;
    size_t entries = 0;
    size_t pointers = 0;
    for (uint64_t b = 0; b < buckets_.size(); ++b) {
      ASSERT_LE(buckets_[b].entries.size(), size_t{kSlotsPerBucket});
      ASSERT_LE(buckets_[b].EncodedBytes(), kBucketHeaderBytes + kSlotsPerBucket * (kEntryHeaderBytes + inline_));
      ASSERT_OK(index_->CheckBucket(b, buckets_[b]));
      for (const Entry& e : buckets_[b].entries) {
        if (kind_ == IndexKind::kHopscotch) {
          const auto& hop = static_cast<const HopscotchIndex&>(*index_);
          const uint64_t d = hop.Distance(hop.Home(e.hash), b);
          ASSERT_LT(d, static_cast<uint64_t>(hop.reach())) << "entry in bucket " << b;
          if (d > 0) spilled[hop.Home(e.hash)] |= static_cast<uint8_t>(1u << (d - 1));
        } else {
          const auto c = static_cast<const CuckooIndex&>(*index_).Candidates(e.hash);
          ASSERT_TRUE(b == c[0] || b == c[1] || b == c[2]) << "entry in bucket " << b;
        }
        ASSERT_TRUE(keys.insert({e.hash, e.is_inline ? e.key : objects_.at(e.ref.address.raw())}).second)
            << "a key twice";
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

  IndexKind kind_;
  std::unique_ptr<Index> index_;
  std::vector<Bucket> buckets_;
  uint32_t inline_;
  std::map<uint64_t, std::string> objects_;
  uint64_t next_object_ = 1;
};

class IndexTest : public ::testing::TestWithParam<IndexKind> {};

std::string KindName(IndexKind kind) { return kind == IndexKind::kHopscotch ? "hopscotch" : "cuckoo"; }

TEST_P(IndexTest, AgreesWithAMapUnderRandomOperations) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  std::mt19937_64 random(seed);
  const std::vector<uint64_t> sizes = GetParam() == IndexKind::kHopscotch ? std::vector<uint64_t>{2, 3, 5, 16, 64}
                                                                        : std::vector<uint64_t>{3, 4, 16, 64};
  for (uint64_t buckets : sizes) {
    SCOPED_TRACE(absl::StrCat(buckets, " buckets"));
    MemoryTable table(GetParam(), buckets, 40);
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
      bool found = false;
      table.LockFreeReads(key, &found);
      ASSERT_TRUE(found) << key << " is not where a lock-free GET looks";
    }
  }
}

// How full a table gets before the first insert fails, and how many buckets a lock-free GET reads at
// 50%, 75% and 90% fill (hits stop at the bucket holding the key; misses read every bucket named). The
// numbers are printed for docs/formats/kv.md; the floors are below what the design gives so that the
// test is about regressions, not luck.
TEST_P(IndexTest, FillAndReadsPerLookup) {
  const IndexKind kind = GetParam();
  for (uint64_t buckets : {1024, 16384}) {
    MemoryTable table(kind, buckets, 40);
    std::vector<std::string> keys;
    absl::Status s;
    std::map<int, std::string> at_fill;  // percent -> report line
    while (s.ok()) {
      keys.push_back(absl::StrCat("key-", keys.size()));
      s = table.Put(keys.back(), "v");
      if (!s.ok()) break;
      for (int percent : {50, 75, 90}) {
        if (keys.size() != static_cast<size_t>(table.capacity() * percent / 100)) continue;
        int one_read = 0;
        int total_reads = 0;
        int max_reads = 0;
        for (const std::string& k : keys) {
          bool found = false;
          const int reads = table.LockFreeReads(k, &found);
          ASSERT_TRUE(found) << k;
          one_read += reads == 1;
          total_reads += reads;
          max_reads = std::max(max_reads, reads);
        }
        int miss_reads = 0;
        const int misses = 10000;
        for (int i = 0; i < misses; ++i) {
          bool found = true;
          miss_reads += table.LockFreeReads(absl::StrCat("absent-", i), &found);
          ASSERT_FALSE(found);
        }
        const double one = static_cast<double>(one_read) / keys.size();
        at_fill[percent] = absl::StrFormat("%d%%: hits %.1f%% one read, %.3f reads avg, %d max; misses %.3f reads avg",
                                           percent, 100 * one, static_cast<double>(total_reads) / keys.size(),
                                           max_reads, static_cast<double>(miss_reads) / misses);
        if (percent == 75 && kind == IndexKind::kHopscotch) {
          EXPECT_GE(one, 0.90) << "the issue's target: one read for >= 90% of lookups at 75% fill";
        }
      }
    }
    ASSERT_TRUE(absl::IsResourceExhausted(s)) << s;
    keys.pop_back();
    const double fill = static_cast<double>(keys.size()) / table.capacity();
    printf("%s, %llu buckets of 8: first failed insert at %.1f%% fill\n", KindName(kind).c_str(),
           static_cast<unsigned long long>(buckets), 100 * fill);
    for (const auto& [percent, line] : at_fill) printf("  %s\n", line.c_str());
    EXPECT_GT(fill, 0.90);
    EXPECT_EQ(at_fill.size(), 3u) << "did not reach 90% fill";
  }
}

// A bucket that decodes but does not belong where it was read (a key out of its home's reach or not in
// one of its candidates; spill bits a cuckoo bucket never has, or beyond a small table's reach) is
// DataLoss: the transactional path checks every bucket it reads before it trusts or rewrites it.
TEST(IndexCheckTest, BucketsThatDoNotBelongAreDataLoss) {
  Entry e;
  e.key = "some key";
  e.hash = KeyHash(e.key);
  e.key_bytes = static_cast<uint16_t>(e.key.size());
  e.value = "v";
  e.value_bytes = 1;
  Bucket bucket;
  bucket.entries.push_back(e);

  const HopscotchIndex hop(64);
  const uint64_t home = hop.Home(e.hash);
  for (int d = 0; d < kHopscotchReach; ++d) {
    EXPECT_OK(hop.CheckBucket(hop.Next(home, d), bucket));
  }
  EXPECT_TRUE(absl::IsDataLoss(hop.CheckBucket(hop.Next(home, kHopscotchReach), bucket)));
  EXPECT_TRUE(absl::IsDataLoss(hop.CheckBucket(hop.Next(home, 63), bucket)));  // before its home
  const HopscotchIndex small(3);  // reach 3: bits for distances 3..7 cannot be set
  Bucket bits;
  bits.spilled = 0b11;
  EXPECT_OK(small.CheckBucket(0, bits));
  bits.spilled = 0b100;
  EXPECT_TRUE(absl::IsDataLoss(small.CheckBucket(0, bits)));

  const CuckooIndex cuckoo(64);
  const auto c = cuckoo.Candidates(e.hash);
  EXPECT_NE(c[0], c[1]);
  EXPECT_NE(c[0], c[2]);
  EXPECT_NE(c[1], c[2]);
  for (uint64_t b : c) EXPECT_OK(cuckoo.CheckBucket(b, bucket));
  for (uint64_t b = 0; b < 64; ++b) {
    if (b != c[0] && b != c[1] && b != c[2]) {
      EXPECT_TRUE(absl::IsDataLoss(cuckoo.CheckBucket(b, bucket))) << b;
    }
  }
  Bucket spilled = bucket;
  spilled.spilled = 1;
  EXPECT_TRUE(absl::IsDataLoss(cuckoo.CheckBucket(c[0], spilled)));
  // And a table too small for an index is refused when it is made.
  EXPECT_TRUE(absl::IsInvalidArgument(MakeIndex(IndexKind::kCuckoo, 2).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MakeIndex(IndexKind::kHopscotch, 1).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MakeIndex(static_cast<IndexKind>(7), 64).status()));
}

INSTANTIATE_TEST_SUITE_P(Kinds, IndexTest, ::testing::Values(IndexKind::kHopscotch, IndexKind::kCuckoo),
                         [](const auto& info) { return KindName(info.param); });

}  // namespace
}  // namespace fathom::kv
