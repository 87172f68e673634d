// The transaction log records: round trips, and every malformed input refused with a clear error.
#include "txn/records.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"

namespace fathom::txn {
namespace {

Record SampleRecord() {
  Record record;
  record.kind = RecordKind::kLock;
  record.id = TxnId{7, 3, 1, 42};
  record.truncated = {40, 41};
  WriteEntry a;
  a.ref = object::ObjectRef{{(3u << 16) | 1, 128}, 5, 128};
  a.op = WriteOp::kWrite;
  a.check_version = true;
  a.version = 9;
  a.payload = "hello, world";  // 12 bytes: padded to 16
  WriteEntry b;
  b.ref = object::ObjectRef{{(3u << 16) | 1, 1024}, 0, 256};
  b.op = WriteOp::kAlloc;
  b.payload = std::string(200, 'z');
  WriteEntry c;
  c.ref = object::ObjectRef{{(3u << 16) | 2, 0}, 2, 64};
  c.op = WriteOp::kFree;
  record.entries = {a, b, c};
  record.written_regions = {(3u << 16) | 1, (3u << 16) | 2, (4u << 16) | 1};  // one written elsewhere
  return record;
}

void Put32(std::string& s, size_t at, uint32_t v) { std::memcpy(s.data() + at, &v, 4); }

TEST(RecordsTest, RoundTrip) {
  const Record record = SampleRecord();
  const std::string bytes = EncodeRecord(record);
  std::vector<const WriteEntry*> entries;
  for (const WriteEntry& e : record.entries) entries.push_back(&e);
  EXPECT_EQ(bytes.size(), RecordSize(record.truncated.size(), entries, record.written_regions.size()));
  ASSERT_OK_AND_ASSIGN(Record back, DecodeRecord(bytes));
  EXPECT_EQ(back.kind, record.kind);
  EXPECT_EQ(back.id, record.id);
  EXPECT_EQ(back.truncated, record.truncated);
  EXPECT_EQ(back.written_regions, record.written_regions);
  ASSERT_EQ(back.entries.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back.entries[i].ref, record.entries[i].ref);
    EXPECT_EQ(back.entries[i].op, record.entries[i].op);
    EXPECT_EQ(back.entries[i].check_version, record.entries[i].check_version);
    EXPECT_EQ(back.entries[i].version, record.entries[i].version);
    EXPECT_EQ(back.entries[i].payload, record.entries[i].payload);
  }
  EXPECT_EQ(back.entries[2].new_incarnation(), 3u) << "a free moves the incarnation on";
  EXPECT_EQ(back.entries[2].new_flags(), 0u);

  Record truncate;
  truncate.kind = RecordKind::kTruncate;
  truncate.id = TxnId{1, 2, 0, 0};
  truncate.truncated = {1, 2, 3};
  ASSERT_OK_AND_ASSIGN(Record t, DecodeRecord(EncodeRecord(truncate)));
  EXPECT_EQ(t.truncated, truncate.truncated);
}

TEST(RecordsTest, EveryTruncationIsRefused) {
  const std::string bytes = EncodeRecord(SampleRecord());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = DecodeRecord(std::string_view(bytes).substr(0, n));
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << n;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeRecord(bytes + std::string(8, '\0')).status())) << "trailing bytes";
}

TEST(RecordsTest, HeaderCorruptionIsRefused) {
  const std::string good = EncodeRecord(SampleRecord());
  auto refused = [](std::string bytes, const char* what) {
    auto r = DecodeRecord(bytes);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << what << ": " << r.status();
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("malformed transaction record"), std::string::npos);
    }
  };
  std::string s = good;
  s[0] = 2;
  refused(s, "format version");
  s = good;
  s[1] = 9;
  refused(s, "kind");
  s = good;
  Put32(s, 4, 0);
  refused(s, "node 0");
  s = good;
  Put32(s, 24, 3);
  refused(s, "more truncated ids than present");
  s = good;
  Put32(s, 24, 1u << 30);
  refused(s, "absurd truncated count");
  s = good;
  Put32(s, 28, 4);
  refused(s, "more entries than present");
  s = good;
  Put32(s, 28, 0);
  refused(s, "a lock record without entries");
  s = good;
  s[1] = static_cast<char>(RecordKind::kAbort);
  refused(s, "an abort with entries");
  s = good;
  Put32(s, 44, 1);
  refused(s, "reserved header bytes");
}

void Put64(std::string& s, size_t at, uint64_t v) { std::memcpy(s.data() + at, &v, 8); }

// `bytes` decode to InvalidArgument whose message says `says`; `what` names the lie.
void ExpectRefused(const std::string& bytes, const char* what, const char* says) {
  auto r = DecodeRecord(bytes);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << what << ": " << r.status();
  EXPECT_NE(r.status().message().find(says), std::string::npos) << what << ": " << r.status();
}

// The coordinator's mark: both parts or neither, and no incarnation after the record's own epoch.
TEST(RecordsTest, TheCoordinatorMarkRoundTripsAndLiesAreRefused) {
  Record record = SampleRecord();
  record.mark = CoordinatorMark{5, 40};
  ASSERT_OK_AND_ASSIGN(Record back, DecodeRecord(EncodeRecord(record)));
  EXPECT_EQ(back.mark.incarnation, 5u);
  EXPECT_EQ(back.mark.settled_below, 40u);
  EXPECT_TRUE(back.mark.Settles(TxnId{7, 3, 1, 39}));
  EXPECT_FALSE(back.mark.Settles(TxnId{7, 3, 1, 40})) << "not below the bound";
  EXPECT_FALSE(back.mark.Settles(TxnId{4, 3, 1, 1})) << "an id of an earlier incarnation";
  EXPECT_FALSE(CoordinatorMark{}.Settles(TxnId{7, 3, 1, 1})) << "no mark settles nothing";
  const std::string good = EncodeRecord(record);
  std::string s = good;
  Put64(s, 48, 0);
  ExpectRefused(s, "a bound without an incarnation", "coordinator mark");
  s = good;
  Put64(s, 56, 0);
  ExpectRefused(s, "an incarnation without a bound", "coordinator mark");
  s = good;
  Put64(s, 48, 8);
  ExpectRefused(s, "an incarnation after the record's epoch (7)", "coordinator mark");
}

// The written regions: every region the transaction writes, sorted and distinct, covering the entries.
// A thread's marks, one per incarnation: each speaks for its own incarnation's ids only, so a process
// admitted again (new incarnation 8, counters going on) does not settle what it left undecided at
// epoch 6, and the old mark still settles what it did settle then (random_faults seeds 584 and 1062).
TEST(RecordsTest, EachIncarnationsMarkSpeaksForItsOwnIds) {
  const std::vector<CoordinatorMark> marks = {{6, 10}, {8, 30}};
  EXPECT_TRUE(SettledBy(marks, TxnId{6, 2, 1, 9})) << "settled before the removal";
  EXPECT_FALSE(SettledBy(marks, TxnId{6, 2, 1, 12})) << "undecided at the removal: the newer mark is not its";
  EXPECT_FALSE(SettledBy(marks, TxnId{7, 2, 1, 12})) << "an epoch of the old incarnation";
  EXPECT_TRUE(SettledBy(marks, TxnId{8, 2, 1, 25}));
  EXPECT_TRUE(SettledBy(marks, TxnId{9, 2, 1, 29}));
  EXPECT_FALSE(SettledBy(marks, TxnId{9, 2, 1, 30}));
  EXPECT_FALSE(SettledBy(marks, TxnId{5, 2, 1, 1})) << "before every incarnation it knows";
  EXPECT_FALSE(SettledBy({}, TxnId{6, 2, 1, 1}));
}

TEST(RecordsTest, WrittenRegionsThatLieAreRefused) {
  const Record sample = SampleRecord();
  const std::string good = EncodeRecord(sample);
  constexpr size_t kRegionsAt = 64 + 8 * 2;  // after the header and the two truncated ids
  std::string s = good;
  Put32(s, 40, 0);
  ExpectRefused(s, "a lock record without written regions", "no written regions");
  s = good;
  Put32(s, 40, 5000);
  ExpectRefused(s, "an absurd count", "5000 written regions");
  s = good;
  Put32(s, 40, 2);  // two regions claimed: the third and the padding are read as entries
  ExpectRefused(s, "fewer regions than written", "");
  s = good;
  Put32(s, 40, 200);
  ExpectRefused(s, "more regions than the bytes hold", "");
  s = good;
  Put32(s, kRegionsAt + 4, (3u << 16) | 1);
  ExpectRefused(s, "a region twice", "is not above the one before");
  s = good;
  Put32(s, kRegionsAt + 12, 7);
  ExpectRefused(s, "non-zero padding", "padding after the written regions");
  // The entries' regions must be among them.
  Record missing = sample;
  missing.written_regions = {(3u << 16) | 1, (4u << 16) | 1};
  ExpectRefused(EncodeRecord(missing), "an entry's region left out", "is not among the written regions");
  // Records without entries carry none.
  Record abort;
  abort.kind = RecordKind::kAbort;
  abort.id = sample.id;
  abort.written_regions = {1};
  ExpectRefused(EncodeRecord(abort), "an abort with written regions", "with written regions");
  abort.written_regions.clear();
  ASSERT_OK_AND_ASSIGN(Record decoded, DecodeRecord(EncodeRecord(abort)));
  EXPECT_TRUE(decoded.written_regions.empty());
}

TEST(RecordsTest, TheLogEpochRoundTripsAndOnlyCommitBackupRecordsCarryOne) {
  Record lock = SampleRecord();
  lock.log_epoch = 77;
  Record decoded;
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeRecord(EncodeRecord(lock)).status())) << "a LOCK with a log epoch";
  lock.kind = RecordKind::kCommitBackup;
  ASSERT_OK_AND_ASSIGN(decoded, DecodeRecord(EncodeRecord(lock)));
  EXPECT_EQ(decoded.log_epoch, 77u);
  Record commit;
  commit.kind = RecordKind::kCommitPrimary;
  commit.id = lock.id;
  ASSERT_OK_AND_ASSIGN(decoded, DecodeRecord(EncodeRecord(commit)));
  EXPECT_EQ(decoded.log_epoch, 0u);
  commit.log_epoch = 5;
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeRecord(EncodeRecord(commit)).status())) << "a commit with a log epoch";
  lock.log_epoch = 0;
  lock.kind = RecordKind::kLock;
  std::string s = EncodeRecord(lock);
  s[1] = 6;  // was PERSIST, retired
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeRecord(s).status())) << "kind 6";
  s = EncodeRecord(lock);
  s[0] = 1;  // format 1 had no log epoch
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeRecord(s).status())) << "format 1";
  s[0] = 2;  // format 2 had no written regions
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeRecord(s).status())) << "format 2";
}

TEST(RecordsTest, EntryCorruptionIsRefused) {
  const std::string good = EncodeRecord(SampleRecord());
  const size_t entry = 64 + 16 + 16;  // header, two truncated ids, three written regions and padding
  auto refused = [](std::string bytes, const char* what) {
    EXPECT_TRUE(absl::IsInvalidArgument(DecodeRecord(bytes).status())) << what;
  };
  std::string s = good;
  s[entry + 16] = 7;
  refused(s, "operation");
  s = good;
  s[entry + 17] = 2;
  refused(s, "flag bits");
  s = good;
  s[entry + 18] = 1;
  refused(s, "reserved");
  s = good;
  Put32(s, entry + 12, 100);
  refused(s, "capacity not a slot size");
  s = good;
  Put32(s, entry + 20, 97);
  refused(s, "payload longer than the slot");
  s = good;
  Put32(s, entry + 20, 17);
  refused(s, "a payload length that runs into the next entry");
  s = good;
  s[entry + 32 + 12] = 'x';
  refused(s, "non-zero padding");
  s = good;
  s[entry + 31] = static_cast<char>(0x80);
  refused(s, "version with the lock bit");
  // The second entry moved onto the first one's address.
  Record twice = SampleRecord();
  twice.entries[1].ref.address = twice.entries[0].ref.address;
  refused(EncodeRecord(twice), "one object twice");
  Record free_with_payload = SampleRecord();
  free_with_payload.entries[2].payload = "x";
  refused(EncodeRecord(free_with_payload), "a free with a payload");
}

TEST(RecordsTest, RepliesAndSmallMessagesAreChecked) {
  ASSERT_OK_AND_ASSIGN(auto grant, DecodeLockReply(EncodeLockReply({{3, 4}, 9}), 2));
  EXPECT_EQ(grant.log_epoch, 9u);
  const std::vector<uint64_t> versions = grant.versions;
  EXPECT_EQ(versions, (std::vector<uint64_t>{3, 4}));
  EXPECT_FALSE(DecodeLockReply(EncodeLockReply({{3, 4}, 9}), 3).ok());
  EXPECT_FALSE(DecodeLockReply(EncodeLockReply({{3, 4}, 9}).substr(0, 27), 2).ok());
  EXPECT_FALSE(DecodeLockReply("", 0).ok());

  ASSERT_OK_AND_ASSIGN(AllocRequest request, DecodeAllocRequest(EncodeAllocRequest({100, 8, 7})));
  EXPECT_EQ(request.payload_capacity, 100u);
  EXPECT_EQ(request.count, 8u);
  EXPECT_EQ(request.epoch, 7u);
  EXPECT_FALSE(DecodeAllocRequest(EncodeAllocRequest({0, 1, 7})).ok());
  EXPECT_FALSE(DecodeAllocRequest(EncodeAllocRequest({1u << 20, 1, 7})).ok());
  EXPECT_FALSE(DecodeAllocRequest(EncodeAllocRequest({100, 0, 7})).ok());
  EXPECT_FALSE(DecodeAllocRequest(EncodeAllocRequest({100, kMaxAllocCount + 1, 7})).ok());
  EXPECT_FALSE(DecodeAllocRequest(EncodeAllocRequest({100, 1, 7}).substr(0, 4)).ok());  // the old, 4-byte form
  EXPECT_FALSE(DecodeAllocRequest("abc").ok());

  const object::ObjectRef ref{{(2u << 16) | 1, 4096}, 3, 512};
  const object::ObjectRef other{{(2u << 16) | 1, 8192}, 0, 512};
  const std::string reply = EncodeAllocReply({ref, other});
  ASSERT_OK_AND_ASSIGN(std::vector<object::ObjectRef> refs, DecodeAllocReply(reply, 2, 480));
  EXPECT_EQ(refs, (std::vector<object::ObjectRef>{ref, other}));
  ASSERT_OK_AND_ASSIGN(refs, DecodeAllocReply(reply, 8, 100));  // fewer than asked: the owner ran out
  EXPECT_EQ(refs.size(), 2u);
  EXPECT_FALSE(DecodeAllocReply(reply, 1, 100).ok());                     // more than asked
  EXPECT_FALSE(DecodeAllocReply(reply, 2, 481).ok());                     // a slot too small for the payload
  EXPECT_FALSE(DecodeAllocReply(reply.substr(0, reply.size() - 1), 2, 100).ok());  // truncated
  EXPECT_FALSE(DecodeAllocReply(reply + "x", 2, 100).ok());                        // trailing bytes
  EXPECT_FALSE(DecodeAllocReply(EncodeAllocReply({}), 2, 100).ok());               // none
  EXPECT_FALSE(DecodeAllocReply("ab", 2, 100).ok());
  std::string lying = reply;
  lying[0] = 3;  // says three slots, carries two
  EXPECT_FALSE(DecodeAllocReply(lying, 8, 100).ok());
  for (size_t i = 4; i < reply.size(); ++i) {  // every byte of the references: a flip is refused or still a slot
    std::string flipped = reply;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x41);
    auto decoded = DecodeAllocReply(flipped, 2, 100);
    if (decoded.ok()) {
      for (const object::ObjectRef& r : *decoded) EXPECT_GE(r.capacity, 132u);
    }
  }
  ASSERT_OK_AND_ASSIGN(object::ObjectRef back, DecodeRef(EncodeRef(ref)));
  EXPECT_EQ(back, ref);
  object::ObjectRef odd = ref;
  odd.address.offset = 4100;
  EXPECT_FALSE(DecodeRef(EncodeRef(odd)).ok());
  odd = ref;
  odd.capacity = 0;
  EXPECT_FALSE(DecodeRef(EncodeRef(odd)).ok());
  EXPECT_FALSE(DecodeRef(EncodeRef(ref).substr(1)).ok());
}

}  // namespace
}  // namespace fathom::txn
