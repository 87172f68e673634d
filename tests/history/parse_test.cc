// The history schema and the rules across lines (docs/formats/history.md): what is accepted, and the
// error for each way a history can be wrong.
#include "tests/history/parse.h"

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "tests/history/format.h"
#include "tests/history/history_builder.h"

namespace fathom::history {
namespace {

using ::fathom::history::testing::A;
using ::fathom::history::testing::HistoryBuilder;
using ::fathom::history::testing::R;
using ::testing::HasSubstr;

// `text` is refused with InvalidArgument, the message containing `what`.
void ExpectError(const std::string& text, const std::string& what) {
  absl::StatusOr<History> history = ParseHistory(text);
  ASSERT_FALSE(history.ok()) << "accepted:\n" << text;
  EXPECT_EQ(history.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(history.status().message()), HasSubstr(what)) << text;
}

constexpr char kInvoke[] = R"({"process":0,"type":"invoke","f":"txn","value":[[":append",1,2],[":r",1,null]],"time":10})";
constexpr char kOk[] = R"({"process":0,"type":"ok","f":"txn","value":[[":append",1,2],[":r",1,[2]]],"time":20})";

TEST(ParseEventTest, ReadsEveryField) {
  ASSERT_OK_AND_ASSIGN(Event e, ParseEvent(kOk));
  EXPECT_EQ(e.process, 0);
  EXPECT_EQ(e.type, EventType::kOk);
  EXPECT_EQ(e.time, 20);
  ASSERT_EQ(e.ops.size(), 2u);
  EXPECT_EQ(e.ops[0], MicroOp::Append(1, 2));
  EXPECT_EQ(e.ops[1], MicroOp::Read(1, std::vector<int64_t>{2}));
}

TEST(ParseEventTest, FieldOrderAndWhitespaceAreFree) {
  ASSERT_OK_AND_ASSIGN(
      Event e, ParseEvent(" { \"time\" : 5 ,\t\"value\" : [ ] , \"f\":\"txn\", \"type\":\"info\", \"process\":7 }\r"));
  EXPECT_EQ(e.process, 7);
  EXPECT_EQ(e.type, EventType::kInfo);
  EXPECT_TRUE(e.ops.empty());
}

TEST(ParseEventTest, RoundTripsThroughFormatEvent) {
  const Event e{3, EventType::kOk, {MicroOp::Append(-4, INT64_MIN), MicroOp::Read(INT64_MAX, std::vector<int64_t>{})},
                123456789012345};
  ASSERT_OK_AND_ASSIGN(Event back, ParseEvent(FormatEvent(e)));
  EXPECT_EQ(back, e);
}

struct BadEvent {
  const char* line;
  const char* error;
};

class BadEventTest : public ::testing::TestWithParam<BadEvent> {};

TEST_P(BadEventTest, IsRefusedWithAClearError) {
  absl::StatusOr<Event> e = ParseEvent(GetParam().line);
  ASSERT_FALSE(e.ok()) << GetParam().line;
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()), HasSubstr(GetParam().error)) << GetParam().line;
}

INSTANTIATE_TEST_SUITE_P(
    Schema, BadEventTest,
    ::testing::Values(
        BadEvent{R"([1,2])", "expected a JSON object, got array"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[],"time":1,"index":3})", "unknown field \"index\""},
        BadEvent{R"({"type":"ok","f":"txn","value":[],"time":1})", "missing field \"process\""},
        BadEvent{R"({"process":0,"f":"txn","value":[],"time":1})", "missing field \"type\""},
        BadEvent{R"({"process":0,"type":"ok","value":[],"time":1})", "missing field \"f\""},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","time":1})", "missing field \"value\""},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[]})", "missing field \"time\""},
        BadEvent{R"({"process":"0","type":"ok","f":"txn","value":[],"time":1})",
                 "field \"process\": expected an integer, got string \"0\""},
        BadEvent{R"({"process":-1,"type":"ok","f":"txn","value":[],"time":1})", "field \"process\": must not be negative"},
        BadEvent{R"({"process":1.0,"type":"ok","f":"txn","value":[],"time":1})",
                 "field \"process\": expected an integer, got 1.0"},
        BadEvent{R"({"process":1e2,"type":"ok","f":"txn","value":[],"time":1})", "expected an integer, got 1e2"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[],"time":9223372036854775808})",
                 "9223372036854775808 is outside the 64-bit integer range"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[],"time":-5})", "field \"time\": must not be negative"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[],"time":null})",
                 "field \"time\": expected an integer, got null"},
        BadEvent{R"({"process":0,"type":"done","f":"txn","value":[],"time":1})",
                 "field \"type\": expected \"invoke\", \"ok\", \"fail\" or \"info\", got string \"done\""},
        BadEvent{R"({"process":0,"type":true,"f":"txn","value":[],"time":1})", "got true"},
        BadEvent{R"({"process":0,"type":"ok","f":"read","value":[],"time":1})",
                 "field \"f\": expected \"txn\", got string \"read\""},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":{},"time":1})",
                 "field \"value\": expected a list of micro-ops, got object"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":append",1]],"time":1})",
                 "micro-op 1: expected [\":append\", key, value] or [\":r\", key, null or list], got an array of 2"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":append",1,2,3]],"time":1})", "got an array of 4"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[7],"time":1})", "micro-op 1: expected [\":append\""},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":w",1,2]],"time":1})",
                 "micro-op 1: expected \":append\" or \":r\" first, got string \":w\""},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[["append",1,2]],"time":1})", "got string \"append\""},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":append","1",2]],"time":1})",
                 "micro-op 1, key: expected an integer, got string \"1\""},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":append",1,null]],"time":1})",
                 "micro-op 1, appended value: expected an integer, got null"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":append",1,[2]]],"time":1})",
                 "appended value: expected an integer, got array"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":r",1,5]],"time":1})",
                 "micro-op 1, read result: expected null or a list, got number 5"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":r",1,[1,"2"]]],"time":1})",
                 "micro-op 1, read element 2: expected an integer, got string \"2\""},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":r",1,[1,2.5]]],"time":1})",
                 "read element 2: expected an integer, got 2.5"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":r",1,[[1]]]],"time":1})",
                 "read element 1: expected an integer, got array"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":append",1,2],[":r",1,null]],"time":1})",
                 "micro-op 2: an ok completion's read must be a list ([] for an empty key), got null"},
        BadEvent{R"({"process":0,"type":"invoke","f":"txn","value":[[":r",1,[]]],"time":1})",
                 "micro-op 1: the read of an invoke must be null, got a list"},
        BadEvent{R"({"process":0,"type":"fail","f":"txn","value":[[":r",1,[1]]],"time":1})",
                 "the read of a fail completion must be null"},
        BadEvent{R"({"process":0,"type":"info","f":"txn","value":[[":r",1,[]]],"time":1})",
                 "the read of an info completion must be null"},
        BadEvent{R"({"process":0,"process":1,"type":"ok","f":"txn","value":[],"time":1})",
                 "bad JSON, column 14: duplicate field \"process\""},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[],"time":1}})", "bad JSON, column 56: unexpected '}'"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[],"time":1)", "bad JSON, column 55: expected ',' or '}'"},
        BadEvent{R"({"process":0,"type":"ok","f":"txn","value":[[":r",1,[1,2]],"time":1})",
                 "expected ',' or ']' in an array, got ':'"},
        BadEvent{R"({"process":01,"type":"ok","f":"txn","value":[],"time":1})", "leading zero"},
        BadEvent{R"({"process":+1,"type":"ok","f":"txn","value":[],"time":1})", "expected a value, got '+'"},
        BadEvent{R"({"process":0x1,"type":"ok","f":"txn","value":[],"time":1})", "expected ',' or '}' in an object, got 'x'"},
        BadEvent{R"({"process":NaN,"type":"ok","f":"txn","value":[],"time":1})", "expected a value, got 'N'"},
        BadEvent{R"({'process':0})", "expected a field name in quotes, got '''"},
        BadEvent{"", "bad JSON, column 1: expected a value, got end of line"}));

TEST(ParseHistoryTest, PairsInvokesWithCompletions) {
  const std::string text = std::string(kInvoke) + "\n" + kOk + "\n";
  ASSERT_OK_AND_ASSIGN(History h, ParseHistory(text));
  ASSERT_EQ(h.txns.size(), 1u);
  EXPECT_EQ(h.lines, 2);
  const Txn& t = h.txns[0];
  EXPECT_EQ(t.outcome, EventType::kOk);
  EXPECT_EQ(t.invoke_line, 1);
  EXPECT_EQ(t.complete_line, 2);
  EXPECT_EQ(t.invoke_time, 10);
  EXPECT_EQ(t.complete_time, 20);
  EXPECT_EQ(t.ops[1], MicroOp::Read(1, std::vector<int64_t>{2}));  // the completion's ops, reads filled
}

TEST(ParseHistoryTest, FinalNewlineIsOptional) {
  ASSERT_OK_AND_ASSIGN(History h, ParseHistory(std::string(kInvoke) + "\n" + kOk));
  EXPECT_EQ(h.txns.size(), 1u);
  ASSERT_OK_AND_ASSIGN(History empty, ParseHistory(""));
  EXPECT_TRUE(empty.txns.empty());
}

TEST(ParseHistoryTest, InvokeWithoutCompletionIsInfo) {
  ASSERT_OK_AND_ASSIGN(History h, ParseHistory(std::string(kInvoke) + "\n"));
  ASSERT_EQ(h.txns.size(), 1u);
  EXPECT_EQ(h.txns[0].outcome, EventType::kInfo);
  EXPECT_EQ(h.txns[0].complete_line, 0);
}

TEST(ParseHistoryTest, FailAndInfoKeepTheInvokedOps) {
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1), R(1, {1})}).Fail(0).Invoke(0, {A(1, 2)}).Info(0);
  ASSERT_OK_AND_ASSIGN(History history, h.Parse());
  ASSERT_EQ(history.txns.size(), 2u);
  EXPECT_EQ(history.txns[0].outcome, EventType::kFail);
  EXPECT_EQ(history.txns[0].ops[1], MicroOp::Read(1));
  EXPECT_EQ(history.txns[1].outcome, EventType::kInfo);
}

TEST(ParseHistoryTest, ErrorsNameTheLine) {
  ExpectError(std::string(kInvoke) + "\n" + R"({"process":0,"type":"ok"})" + "\n",
              "line 2: missing field \"f\"");
  ExpectError(std::string(kInvoke) + "\n{\n", "line 2: bad JSON, column 2: expected a field name in quotes, got end of line");
}

TEST(ParseHistoryTest, EmptyLineIsRefused) {
  ExpectError(std::string(kInvoke) + "\n\n" + kOk + "\n", "line 2: empty line");
  ExpectError(std::string(kInvoke) + "\n" + kOk + "\n\n", "line 3: empty line");
}

TEST(ParseHistoryTest, CompletionWithoutInvoke) {
  ExpectError(std::string(kOk) + "\n", "line 1: ok completion of process 0, which has no invoke in progress");
  ExpectError(std::string(kInvoke) + "\n" + kOk + "\n" + kOk + "\n", "line 3: ok completion of process 0");
}

TEST(ParseHistoryTest, TwoInvokesInARow) {
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1)}).Invoke(1, {A(1, 2)}).Invoke(0, {A(1, 3)});
  ExpectError(h.Text(), "line 3: process 0 invoked again while its invoke on line 1 has not completed");
}

TEST(ParseHistoryTest, CompletionOpsMustMatchTheInvoke) {
  const std::string invoke = R"({"process":0,"type":"invoke","f":"txn","value":[[":append",1,2],[":r",1,null]],"time":1})";
  ExpectError(invoke + "\n" + R"({"process":0,"type":"ok","f":"txn","value":[[":append",1,3],[":r",1,[3]]],"time":2})",
              "line 2: micro-op 1 of the ok completion is [[:append 1 3]] but its invoke on line 1 had [[:append 1 2]]");
  ExpectError(invoke + "\n" + R"({"process":0,"type":"ok","f":"txn","value":[[":append",1,2],[":r",2,[]]],"time":2})",
              "micro-op 2 of the ok completion is [[:r 2 []]] but its invoke on line 1 had [[:r 1 nil]]");
  ExpectError(invoke + "\n" + R"({"process":0,"type":"ok","f":"txn","value":[[":r",1,[]],[":append",1,2]],"time":2})",
              "micro-op 1 of the ok completion is [[:r 1 []]]");
  ExpectError(invoke + "\n" + R"({"process":0,"type":"ok","f":"txn","value":[[":append",1,2]],"time":2})",
              "line 2: the ok completion has 1 micro-ops but its invoke on line 1 had 2");
  ExpectError(invoke + "\n" + R"({"process":0,"type":"fail","f":"txn","value":[],"time":2})",
              "the fail completion has 0 micro-ops");
  ExpectError(invoke + "\n" + R"({"process":0,"type":"info","f":"txn","value":[[":append",1,2],[":append",1,3]],"time":2})",
              "micro-op 2 of the info completion is [[:append 1 3]]");
}

TEST(ParseHistoryTest, AppendedValuesMustBeUniquePerKey) {
  HistoryBuilder h;
  h.Serial(0, {A(1, 1), A(2, 1)});  // the same value on another key is fine
  ASSERT_OK(h.Parse().status());
  h.Invoke(1, {A(1, 1)}).Fail(1);
  ExpectError(h.Text(), "line 3: value 1 appended to key 1 again (first on line 1)");

  HistoryBuilder same_txn;
  same_txn.Serial(0, {A(1, 5), A(1, 5)});
  ExpectError(same_txn.Text(), "line 1: value 5 appended to key 1 again (first on line 1)");
}

TEST(ParseHistoryTest, TimeMustNotGoBack) {
  const std::string invoke = R"({"process":0,"type":"invoke","f":"txn","value":[],"time":10})";
  ASSERT_OK(ParseHistory(invoke + "\n" + R"({"process":0,"type":"ok","f":"txn","value":[],"time":10})").status());
  ExpectError(invoke + "\n" + R"({"process":0,"type":"ok","f":"txn","value":[],"time":9})",
              "line 2: time 9 is earlier than the previous line's 10");
}

TEST(ReadHistoryFileTest, ReadsAFileAndNamesItInErrors) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/good.jsonl";
  const std::string bad = dir + "/bad.jsonl";
  std::FILE* f = std::fopen(good.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs((std::string(kInvoke) + "\n" + kOk + "\n").c_str(), f);
  std::fclose(f);
  f = std::fopen(bad.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("{}\n", f);
  std::fclose(f);

  ASSERT_OK_AND_ASSIGN(History h, ReadHistoryFile(good));
  EXPECT_EQ(h.txns.size(), 1u);
  absl::StatusOr<History> refused = ReadHistoryFile(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr(bad + ": line 1: missing field \"process\""));
  EXPECT_EQ(ReadHistoryFile(dir + "/missing.jsonl").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fathom::history
