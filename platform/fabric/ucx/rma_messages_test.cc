#include "platform/fabric/ucx/rma_messages.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "platform/base/byte_order.h"

namespace fathom::fabric::ucx_internal {
namespace {

absl::Span<const std::byte> Bytes(const std::vector<std::byte>& v) { return absl::Span<const std::byte>(v); }

std::vector<std::byte> SampleRequest(const std::vector<std::byte>& payload) {
  RequestBuilder batch;
  batch.AddRead(7, 0x1000, 2048);
  batch.AddWrite(8, 0x2000, payload.data(), static_cast<uint32_t>(payload.size()));
  batch.AddRead(9, 0x3000, 1);
  batch.AddCall(10, /*handler=*/1, /*reply_limit=*/4096, payload.data(), 5);
  return batch.Take();
}

// SampleRequest's call record: after the header, a read, the write (data padded to 8) and a read.
size_t CallRecordAt(size_t payload_bytes) { return 8 + 24 + 24 + ((payload_bytes + 7) & ~size_t{7}) + 24; }

TEST(RmaMessagesTest, RequestRoundTrips) {
  std::vector<std::byte> payload(13);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = std::byte(i + 1);
  RequestBuilder batch;
  batch.AddRead(7, 0x1000, 2048);
  batch.AddWrite(8, 0x2000, payload.data(), 13);
  EXPECT_EQ(batch.count(), 2u);
  EXPECT_EQ(batch.reply_bytes(), 8u + 16 + 2048 + 16);
  std::vector<std::byte> wire = batch.Take();
  EXPECT_EQ(batch.count(), 0u);
  EXPECT_EQ(wire.size(), 8u + 24 + 24 + 16);  // 13 data bytes padded to 16
  auto records = ParseRequest(Bytes(wire));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].kind, RmaKind::kRead);
  EXPECT_EQ((*records)[0].id, 7u);
  EXPECT_EQ((*records)[0].address, 0x1000u);
  EXPECT_EQ((*records)[0].length, 2048u);
  EXPECT_EQ((*records)[1].kind, RmaKind::kWrite);
  EXPECT_EQ((*records)[1].length, 13u);
  EXPECT_EQ(std::memcmp((*records)[1].data, payload.data(), 13), 0);
  // The builder starts a fresh batch after Take.
  batch.AddRead(1, 2, 3);
  auto again = ParseRequest(Bytes(batch.Take()));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->size(), 1u);
}

TEST(RmaMessagesTest, CallsRoundTripAndBudgetTheirReplyLimit) {
  const std::string argument = "lookup key17";
  RequestBuilder batch;
  batch.AddCall(11, /*handler=*/3, /*reply_limit=*/100, argument.data(), static_cast<uint32_t>(argument.size()));
  EXPECT_EQ(batch.reply_bytes(), 8u + 16 + 104);  // the whole limit, padded
  std::vector<std::byte> wire = batch.Take();
  EXPECT_EQ(wire.size(), 8u + 24 + 16);  // 12 argument bytes padded to 16
  auto records = ParseRequest(Bytes(wire));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  const RequestRecord& call = (*records)[0];
  EXPECT_EQ(call.kind, RmaKind::kCall);
  EXPECT_EQ(call.id, 11u);
  EXPECT_EQ(call.handler(), 3u);
  EXPECT_EQ(call.reply_limit(), 100u);
  EXPECT_EQ(call.reply_bytes(), 16u + 104);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(call.data), call.length), argument);

  ReplyBuilder reply;
  std::memcpy(reply.AddRead(11, 3), "abc", 3);
  reply.AddRead(12, 0);  // an empty reply
  reply.AddResult(13, RmaResult::kNotServed);
  const std::vector<std::byte> answer = reply.Take();  // the parsed records point into it
  auto replies = ParseReply(Bytes(answer));
  ASSERT_TRUE(replies.ok()) << replies.status();
  ASSERT_EQ(replies->size(), 3u);
  EXPECT_EQ((*replies)[0].length, 3u);
  EXPECT_EQ(std::memcmp((*replies)[0].data, "abc", 3), 0);
  EXPECT_EQ((*replies)[1].result, RmaResult::kOk);
  EXPECT_EQ((*replies)[1].length, 0u);
  EXPECT_EQ((*replies)[2].result, RmaResult::kNotServed);
}

TEST(RmaMessagesTest, ReplyRoundTrips) {
  std::vector<std::byte> data(5, std::byte{0xab});
  ReplyBuilder reply;
  std::memcpy(reply.AddRead(7, 5), data.data(), 5);
  reply.AddResult(8, RmaResult::kOk);
  reply.AddResult(9, RmaResult::kNoRegion);
  std::vector<std::byte> wire = reply.Take();
  auto records = ParseReply(Bytes(wire));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  EXPECT_EQ((*records)[0].id, 7u);
  EXPECT_EQ((*records)[0].length, 5u);
  EXPECT_EQ((*records)[0].data[4], std::byte{0xab});
  EXPECT_EQ((*records)[1].result, RmaResult::kOk);
  EXPECT_EQ((*records)[1].length, 0u);
  EXPECT_EQ((*records)[2].result, RmaResult::kNoRegion);
}

TEST(RmaMessagesTest, AReplyBuilderStartsAfreshAfterEachTake) {
  ReplyBuilder reply;
  EXPECT_EQ(reply.count(), 0u);
  std::memcpy(reply.AddRead(7, 3), "abc", 3);
  EXPECT_EQ(reply.count(), 1u);
  EXPECT_EQ(reply.bytes(), 8u + 16 + 8);
  const std::vector<std::byte> first = reply.Take();
  EXPECT_EQ(reply.count(), 0u);
  EXPECT_EQ(reply.bytes(), 0u);
  reply.AddResult(8, RmaResult::kOk);
  reply.AddResult(9, RmaResult::kNoRegion);
  const std::vector<std::byte> second = reply.Take();
  auto one = ParseReply(Bytes(first));
  auto two = ParseReply(Bytes(second));
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].id, 7u);
  ASSERT_EQ(two->size(), 2u);  // nothing of the first reply is left in the second
  EXPECT_EQ((*two)[0].id, 8u);
  EXPECT_EQ((*two)[1].result, RmaResult::kNoRegion);
  // An empty builder still gives a well-formed reply: no records.
  auto none = ParseReply(Bytes(reply.Take()));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

TEST(RmaMessagesTest, AReplyAndARequestJoinedSplitApart) {
  ReplyBuilder reply;
  std::memcpy(reply.AddRead(7, 5), "hello", 5);
  reply.AddResult(8, RmaResult::kOk);
  const std::vector<std::byte> reply_bytes = reply.Take();
  std::vector<std::byte> payload(40, std::byte{3});
  const std::vector<std::byte> request_bytes = SampleRequest(payload);
  const std::vector<std::byte> joined = JoinReplyAndRequest(reply_bytes, request_bytes);
  EXPECT_EQ(joined.size(), 8 + reply_bytes.size() + request_bytes.size());
  auto parts = SplitReplyAndRequest(Bytes(joined));
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(std::vector<std::byte>(parts->reply.begin(), parts->reply.end()), reply_bytes);
  EXPECT_EQ(std::vector<std::byte>(parts->request.begin(), parts->request.end()), request_bytes);
  auto replies = ParseReply(parts->reply);
  auto requests = ParseRequest(parts->request);
  ASSERT_TRUE(replies.ok()) << replies.status();
  ASSERT_TRUE(requests.ok()) << requests.status();
  EXPECT_EQ(replies->size(), 2u);
  EXPECT_EQ(std::memcmp((*replies)[0].data, "hello", 5), 0);

  // Short headers, reserved bytes, and reply lengths that are not whole records or run past the end.
  for (size_t n = 0; n < 8; ++n) {
    std::vector<std::byte> cut(joined.begin(), joined.begin() + n);
    EXPECT_TRUE(absl::IsInvalidArgument(SplitReplyAndRequest(Bytes(cut)).status())) << n;
  }
  auto with = [&](size_t at, uint32_t value) {
    std::vector<std::byte> bad = joined;
    StoreLe<uint32_t>(bad.data() + at, value);
    return SplitReplyAndRequest(Bytes(bad)).status();
  };
  EXPECT_TRUE(absl::IsInvalidArgument(with(4, 1)));
  EXPECT_TRUE(absl::IsInvalidArgument(with(0, static_cast<uint32_t>(reply_bytes.size()) + 4)));
  EXPECT_TRUE(absl::IsInvalidArgument(with(0, static_cast<uint32_t>(joined.size()))));
  EXPECT_TRUE(absl::IsInvalidArgument(with(0, 0xfffffff8u)));
  // A length that splits in the wrong place is whole records of 8 bytes: the parts' own checks catch it.
  for (uint32_t lie : {uint32_t{0}, static_cast<uint32_t>(reply_bytes.size()) - 8,
                       static_cast<uint32_t>(reply_bytes.size()) + 8}) {
    std::vector<std::byte> bad = joined;
    StoreLe<uint32_t>(bad.data(), lie);
    auto split = SplitReplyAndRequest(Bytes(bad));
    ASSERT_TRUE(split.ok()) << split.status();
    EXPECT_FALSE(ParseReply(split->reply).ok() && ParseRequest(split->request).ok()) << lie;
  }
  // Every truncation of the whole leaves a part that does not parse.
  for (size_t n = 8; n < joined.size(); ++n) {
    std::vector<std::byte> cut(joined.begin(), joined.begin() + n);
    auto split = SplitReplyAndRequest(Bytes(cut));
    EXPECT_FALSE(split.ok() && ParseReply(split->reply).ok() && ParseRequest(split->request).ok()) << n;
  }
}

TEST(RmaMessagesTest, EveryTruncationIsRejected) {
  std::vector<std::byte> payload(40, std::byte{1});
  const std::vector<std::byte> wire = SampleRequest(payload);
  for (size_t n = 0; n < wire.size(); ++n) {
    std::vector<std::byte> cut(wire.begin(), wire.begin() + n);
    EXPECT_TRUE(absl::IsInvalidArgument(ParseRequest(Bytes(cut)).status())) << n;
  }
  ReplyBuilder reply;
  std::memcpy(reply.AddRead(7, 40), payload.data(), 40);
  reply.AddResult(8, RmaResult::kOk);
  const std::vector<std::byte> answer = reply.Take();
  for (size_t n = 0; n < answer.size(); ++n) {
    std::vector<std::byte> cut(answer.begin(), answer.begin() + n);
    EXPECT_TRUE(absl::IsInvalidArgument(ParseReply(Bytes(cut)).status())) << n;
  }
}

TEST(RmaMessagesTest, LiesAboutLengthsAndCountsAreRejected) {
  std::vector<std::byte> payload(40, std::byte{1});
  const std::vector<std::byte> wire = SampleRequest(payload);
  auto with = [&](size_t at, auto value) {
    std::vector<std::byte> bad = wire;
    StoreLe(bad.data() + at, value);
    return ParseRequest(Bytes(bad)).status();
  };
  EXPECT_TRUE(absl::IsInvalidArgument(with(0, uint32_t{0x12345678}))) << "magic";
  EXPECT_TRUE(absl::IsInvalidArgument(with(4, uint32_t{3}))) << "fewer records than there are";
  EXPECT_TRUE(absl::IsInvalidArgument(with(4, uint32_t{5}))) << "more records than there are";
  EXPECT_TRUE(absl::IsInvalidArgument(with(4, uint32_t{kMaxBatchRecords + 1})));
  EXPECT_TRUE(absl::IsInvalidArgument(with(8, uint8_t{4}))) << "unknown kind";
  EXPECT_TRUE(absl::IsInvalidArgument(with(8, uint8_t{0}))) << "unknown kind";
  // The call: a handler id out of range, a reply limit of 0 or over the most a record carries.
  const size_t call = CallRecordAt(payload.size());
  EXPECT_TRUE(absl::IsInvalidArgument(with(call + 8, uint32_t{16}))) << "handler 16";
  EXPECT_TRUE(absl::IsInvalidArgument(with(call + 12, uint32_t{0}))) << "reply limit 0";
  EXPECT_TRUE(absl::IsInvalidArgument(with(call + 12, uint32_t{kMaxMessageOpBytes + 1}))) << "reply limit";
  EXPECT_TRUE(absl::IsInvalidArgument(with(call + 4, uint32_t{0}))) << "empty argument";
  EXPECT_TRUE(absl::IsInvalidArgument(with(call + 4, uint32_t{9}))) << "argument past the batch";
  EXPECT_TRUE(with(call + 4, uint32_t{8}).ok()) << "5 argument bytes padded to 8 may say 8";
  EXPECT_TRUE(absl::IsInvalidArgument(with(12, uint32_t{0}))) << "zero length";
  EXPECT_TRUE(absl::IsInvalidArgument(with(12, uint32_t{kMaxMessageOpBytes + 1}))) << "too long";
  // The write's data length says more than the batch holds, or less than it holds.
  EXPECT_TRUE(absl::IsInvalidArgument(with(8 + 24 + 4, uint32_t{4096})));
  EXPECT_TRUE(absl::IsInvalidArgument(with(8 + 24 + 4, uint32_t{8})));
  std::vector<std::byte> trailing = wire;
  trailing.resize(trailing.size() + 8);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseRequest(Bytes(trailing)).status()));

  ReplyBuilder reply;
  std::memcpy(reply.AddRead(7, 40), payload.data(), 40);
  const std::vector<std::byte> answer = reply.Take();
  auto reply_with = [&](size_t at, auto value) {
    std::vector<std::byte> bad = answer;
    StoreLe(bad.data() + at, value);
    return ParseReply(Bytes(bad)).status();
  };
  EXPECT_TRUE(absl::IsInvalidArgument(reply_with(0, uint32_t{kRmaRequestMagic}))) << "a request is no reply";
  EXPECT_TRUE(absl::IsInvalidArgument(reply_with(8 + 8, uint8_t{9}))) << "unknown result";
  EXPECT_TRUE(absl::IsInvalidArgument(reply_with(8 + 8, uint8_t{3}))) << "unknown result";
  EXPECT_TRUE(absl::IsInvalidArgument(reply_with(8 + 8, uint8_t{2}))) << "a call not served carrying data";
  EXPECT_TRUE(absl::IsInvalidArgument(reply_with(8 + 8, uint8_t{1}))) << "a failure carrying data";
  EXPECT_TRUE(absl::IsInvalidArgument(reply_with(8 + 12, uint32_t{48})));
  EXPECT_TRUE(absl::IsInvalidArgument(reply_with(8 + 12, uint32_t{kMaxMessageOpBytes + 1})));
}

// Random flips never crash the parser, and whatever it accepts stays inside the bytes it was given.
TEST(RmaMessagesTest, FlippedBytesNeverReachOutside) {
  std::vector<std::byte> payload(40, std::byte{1});
  const std::vector<std::byte> wire = SampleRequest(payload);
  std::mt19937 random(42);
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<std::byte> bad = wire;
    const int flips = 1 + static_cast<int>(random() % 3);
    for (int f = 0; f < flips; ++f) bad[random() % bad.size()] ^= std::byte(1u << (random() % 8));
    auto records = ParseRequest(Bytes(bad));
    if (!records.ok()) {
      EXPECT_TRUE(absl::IsInvalidArgument(records.status()));
      continue;
    }
    for (const RequestRecord& r : *records) {
      if (r.kind == RmaKind::kRead) continue;
      EXPECT_GE(r.data, bad.data());
      EXPECT_LE(r.data + r.length, bad.data() + bad.size());
    }
  }
}

}  // namespace
}  // namespace fathom::fabric::ucx_internal
