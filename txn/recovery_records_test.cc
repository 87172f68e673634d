// Transaction recovery's messages: round trips, and malformed bytes refused with a clear error (flipped
// bytes, truncation, counts that lie about what follows).
#include "txn/recovery_records.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"

namespace fathom::txn {
namespace {

OrphansReply SampleReply() {
  OrphansReply reply;
  reply.more = true;
  reply.holds.push_back(Hold{TxnId{7, 3, 1, 42}, HoldKind::kLocked, {65537, 65538}, {65537, 65538, 131073}});
  reply.holds.push_back(Hold{TxnId{7, 3, 1, 43}, HoldKind::kRecord, {131073}, {131073}});
  reply.holds.push_back(Hold{TxnId{8, 4, 0, 9}, HoldKind::kAborted, {}, {}});
  reply.holds.push_back(Hold{TxnId{8, 4, 0, 10}, HoldKind::kTruncated, {}, {}});
  reply.marks.push_back(ThreadMark{3, 1, CoordinatorMark{7, 40}});
  reply.marks.push_back(ThreadMark{4, 0, CoordinatorMark{6, 9}});
  return reply;
}

void Put32(std::string& s, size_t at, uint32_t v) { std::memcpy(s.data() + at, &v, 4); }

void ExpectRefused(std::string_view bytes, std::string_view says) {
  absl::StatusOr<OrphansReply> decoded = DecodeOrphansReply(bytes);
  ASSERT_FALSE(decoded.ok()) << "accepted: " << says;
  EXPECT_TRUE(absl::IsInvalidArgument(decoded.status())) << decoded.status();
  EXPECT_NE(std::string(decoded.status().message()).find(says), std::string::npos) << decoded.status();
}

TEST(RecoveryRecordsTest, RoundTrips) {
  ASSERT_OK_AND_ASSIGN(OrphansRequest request, DecodeOrphansRequest(EncodeOrphansRequest({12})));
  EXPECT_EQ(request.epoch, 12u);
  const OrphansReply reply = SampleReply();
  const std::string bytes = EncodeOrphansReply(reply);
  size_t size = 8 + 2 * kMarkBytes;
  for (const Hold& hold : reply.holds) size += HoldSize(hold);
  EXPECT_EQ(bytes.size(), size);
  ASSERT_OK_AND_ASSIGN(OrphansReply decoded, DecodeOrphansReply(bytes));
  EXPECT_TRUE(decoded.more);
  EXPECT_EQ(decoded.holds, reply.holds);
  EXPECT_EQ(decoded.marks, reply.marks);
  for (ResolveAction action : {ResolveAction::kCommit, ResolveAction::kAbort, ResolveAction::kForget}) {
    ResolveRequest resolve{action, 12, TxnId{7, 3, 1, 42}};
    ASSERT_OK_AND_ASSIGN(ResolveRequest back, DecodeResolveRequest(EncodeResolveRequest(resolve)));
    EXPECT_EQ(back.action, action);
    EXPECT_EQ(back.epoch, 12u);
    EXPECT_EQ(back.id, resolve.id);
  }
}

TEST(RecoveryRecordsTest, EveryTruncationOfAReplyIsRefused) {
  const std::string bytes = EncodeOrphansReply(SampleReply());
  for (size_t length = 0; length < bytes.size(); ++length) {
    EXPECT_FALSE(DecodeOrphansReply(std::string_view(bytes).substr(0, length)).ok()) << "cut at " << length;
  }
  EXPECT_FALSE(DecodeOrphansReply(bytes + std::string(4, '\0')).ok()) << "trailing bytes accepted";
}

TEST(RecoveryRecordsTest, LiesAndFlippedBytesInAReplyAreRefused) {
  const std::string good = EncodeOrphansReply(SampleReply());
  constexpr size_t kHoldsAt = 8 + 2 * kMarkBytes;  // the header and two marks
  std::string more_holds = good;
  Put32(more_holds, 0, 5);
  ExpectRefused(more_holds, "hold 4 is cut short");
  std::string more_marks = good;
  more_marks[6] = 100;
  ExpectRefused(more_marks, "reply claims 100 marks");
  std::string mark_node = good;
  Put32(mark_node, 8, 0);
  ExpectRefused(mark_node, "mark 0: node 0");
  std::string mark_bound = good;
  Put32(mark_bound, 8 + kMarkBytes + 16, 0);  // the second mark's bound
  ExpectRefused(mark_bound, "mark 1:");
  std::string too_many = good;
  Put32(too_many, 0, kMaxHoldsPerReply + 1);
  ExpectRefused(too_many, "holds (at most");
  std::string more_regions = good;
  Put32(more_regions, kHoldsAt + 24, 1000);
  ExpectRefused(more_regions, "claims 1000 regions");
  std::string kind = good;
  kind[kHoldsAt + 22] = 9;
  ExpectRefused(kind, "kind 9");
  std::string flag = good;
  flag[4] = 2;
  ExpectRefused(flag, "'more' flag 2");
  std::string reserved = good;
  reserved[5] = 1;
  ExpectRefused(reserved, "reserved byte");
  std::string unsorted = good;
  Put32(unsorted, kHoldsAt + 28, 65539);  // first region now above the second
  ExpectRefused(unsorted, "sorted and distinct");
  std::string node_zero = good;
  Put32(node_zero, kHoldsAt + 16, 0);
  ExpectRefused(node_zero, "node 0");
  std::string out_of_order = good;
  Put32(out_of_order, kHoldsAt, 9);  // the first hold's epoch, now after the second's
  ExpectRefused(out_of_order, "hold 1 is out of id order");
  // The first hold's written regions: 3 after its id, kind and 2 regions here.
  constexpr size_t kWrittenAt = kHoldsAt + 24 + 4 + 2 * 4;
  std::string more_written = good;
  Put32(more_written, kWrittenAt, 1000);
  ExpectRefused(more_written, "claims 1000 written regions");
  std::string written_unsorted = good;
  Put32(written_unsorted, kWrittenAt + 4 + 8, 65536);
  ExpectRefused(written_unsorted, "written regions must be nonzero, sorted and distinct");
  // A hold that writes nothing (only a tombstone may), a tombstone that writes something, and regions
  // held that the transaction does not list as written.
  OrphansReply lie;
  lie.holds.push_back(Hold{TxnId{1, 2, 0, 1}, HoldKind::kRecord, {}, {65537}});
  ExpectRefused(EncodeOrphansReply(lie), "writes 0 regions here");
  lie.holds[0] = Hold{TxnId{1, 2, 0, 1}, HoldKind::kAborted, {}, {65537}};
  ExpectRefused(EncodeOrphansReply(lie), "(aborted) writes");
  lie.holds[0] = Hold{TxnId{1, 2, 0, 1}, HoldKind::kTruncated, {65537}, {65537}};
  ExpectRefused(EncodeOrphansReply(lie), "(truncated) writes");
  lie.holds[0] = Hold{TxnId{1, 2, 0, 1}, HoldKind::kRecord, {65537}, {65538}};
  ExpectRefused(EncodeOrphansReply(lie), "not among its written regions");
}

// A reply that cannot take every hold is cut between transactions, in id order, and says so: the
// decider then decides only what every member reported whole.
TEST(RecoveryRecordsTest, AFullReplyIsCutBetweenTransactionsInIdOrder) {
  std::vector<Hold> holds;
  for (uint64_t counter : {5, 3, 4}) {
    holds.push_back(Hold{TxnId{2, 9, 0, counter}, HoldKind::kLocked, {65537}, {65537, 131073}});
    holds.push_back(Hold{TxnId{2, 9, 0, counter}, HoldKind::kRecord, {131073}, {65537, 131073}});
  }
  const size_t one = HoldSize(holds[0]);
  ASSERT_OK_AND_ASSIGN(OrphansReply all, FillOrphansReply(holds, 6 * one));
  EXPECT_FALSE(all.more);
  ASSERT_EQ(all.holds.size(), 6u);
  EXPECT_EQ(all.holds.front().id.counter, 3u);
  EXPECT_EQ(all.holds.back().id.counter, 5u);
  // Room for five: the third transaction's second hold does not fit, so its first goes too.
  ASSERT_OK_AND_ASSIGN(OrphansReply cut, FillOrphansReply(holds, 5 * one));
  EXPECT_TRUE(cut.more);
  ASSERT_EQ(cut.holds.size(), 4u);
  EXPECT_EQ(cut.holds.back().id.counter, 4u);
  ASSERT_OK(DecodeOrphansReply(EncodeOrphansReply(cut)).status());
  // Not even one transaction fits.
  EXPECT_TRUE(absl::IsResourceExhausted(FillOrphansReply(holds, one).status()));
}

TEST(RecoveryRecordsTest, BadRequestsAreRefused) {
  const std::string request = EncodeOrphansRequest({5});
  for (size_t length = 0; length < request.size(); ++length) {
    EXPECT_FALSE(DecodeOrphansRequest(request.substr(0, length)).ok());
  }
  std::string format = request;
  format[0] = 1;  // format 1's holds had no written regions
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeOrphansRequest(format).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeOrphansRequest(EncodeOrphansRequest({0})).status()));

  const std::string resolve = EncodeResolveRequest({ResolveAction::kAbort, 5, TxnId{4, 2, 1, 8}});
  for (size_t length = 0; length < resolve.size(); ++length) {
    EXPECT_FALSE(DecodeResolveRequest(resolve.substr(0, length)).ok()) << "cut at " << length;
  }
  EXPECT_FALSE(DecodeResolveRequest(resolve + "x").ok());
  std::string action = resolve;
  action[1] = 4;
  EXPECT_NE(std::string(DecodeResolveRequest(action).status().message()).find("resolve action 4"), std::string::npos);
  std::string reserved = resolve;
  reserved[39] = 1;
  EXPECT_NE(std::string(DecodeResolveRequest(reserved).status().message()).find("reserved"), std::string::npos);
  std::string node_zero = resolve;
  Put32(node_zero, 16 + 16, 0);
  EXPECT_NE(std::string(DecodeResolveRequest(node_zero).status().message()).find("node 0"), std::string::npos);
  EXPECT_TRUE(
      absl::IsInvalidArgument(DecodeResolveRequest(EncodeResolveRequest({ResolveAction::kCommit, 0, {}})).status()));
}

}  // namespace
}  // namespace fathom::txn
