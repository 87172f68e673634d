// Corrupted history files: every flipped byte, truncation, wrong type, missing field, bad number and
// unbalanced bracket gets a clear error naming its line. The one kind of damage a checksum-free text
// format cannot catch is a digit turned into another digit (a different, well-formed number); those are
// the only corruptions allowed through, and the checker then sees a different history.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "tests/history/check.h"
#include "tests/history/history_builder.h"
#include "tests/history/parse.h"

namespace fathom::history {
namespace {

using ::fathom::history::testing::A;
using ::fathom::history::testing::HistoryBuilder;
using ::fathom::history::testing::R;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A small history using every part of the format: all four types, appends, reads (empty and not), a
// negative key, several processes.
std::string SampleHistory() {
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1), R(2, {})});
  h.Invoke(1, {A(-2, 7)});
  h.Ok(0).Fail(1);
  h.Invoke(2, {A(2, 10), A(1, 2)}).Info(2);
  h.Serial(0, {R(1, {1, 2}), A(2, 11), R(2, {10, 11})});
  h.Invoke(3, {R(1, {1, 2})});
  return h.Text();
}

// 1-based line of byte `pos`.
int LineOf(const std::string& text, size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + pos, '\n'));
}

// The line number an error names ("line N: ..."), or -1.
int ErrorLine(const absl::Status& status) {
  const std::string message(status.message());
  if (message.rfind("line ", 0) != 0) return -1;
  int line = -1;
  if (!absl::SimpleAtoi(message.substr(5, message.find(':') - 5), &line)) return -1;
  return line;
}

// A byte of a number: changing it can make another well-formed number ("-2" -> " 2" or "\r2").
bool IsNumberByte(char c) { return (c >= '0' && c <= '9') || c == '-'; }

TEST(CorruptionTest, SampleIsValid) { ASSERT_OK(ParseHistory(SampleHistory()).status()); }

TEST(CorruptionTest, EveryBitFlipIsRefusedUnlessItMakesAnotherNumber) {
  const std::string good = SampleHistory();
  int accepted = 0;
  for (size_t pos = 0; pos < good.size(); ++pos) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ (1 << bit));
      absl::StatusOr<History> h = ParseHistory(bad);
      const std::string where = absl::StrCat("byte ", pos, " ('", good.substr(pos, 1), "') bit ", bit);
      if (h.ok()) {
        ++accepted;
        // Only a number can become another well-formed number: a digit to a digit, '0' -> ' ' (0x30 ^
        // 0x10), '-' -> '\r' (0x2D ^ 0x20).
        EXPECT_TRUE(IsNumberByte(good[pos])) << where;
        continue;
      }
      EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument) << where;
      const int line = ErrorLine(h.status());
      if (IsNumberByte(good[pos]) || good[pos] == '\n') {
        // A changed number can break a rule found on a later line (time order, unique appends), and a
        // broken line end shows on the line it joins or splits.
        EXPECT_GE(line, LineOf(good, pos) - 1) << where << ": " << h.status();
      } else {
        EXPECT_EQ(line, LineOf(good, pos)) << where << ": " << h.status();
      }
    }
  }
  EXPECT_GT(accepted, 0);  // some digit flips; see the comment at the top
}

TEST(CorruptionTest, EveryStructuralByteReplacementIsRefused) {
  const std::string good = SampleHistory();
  const std::string replacements = std::string("x{}[],:\"\\ \t-.e") + '\0' + '\xff';
  for (size_t pos = 0; pos < good.size(); ++pos) {
    if (IsNumberByte(good[pos]) || good[pos] == '\n') continue;
    for (char c : replacements) {
      if (c == good[pos]) continue;
      std::string bad = good;
      bad[pos] = c;
      absl::StatusOr<History> h = ParseHistory(bad);
      ASSERT_FALSE(h.ok()) << "byte " << pos << " ('" << good[pos] << "') -> '" << c << "' accepted";
      EXPECT_EQ(ErrorLine(h.status()), LineOf(good, pos)) << h.status();
    }
  }
}

TEST(CorruptionTest, TruncationInsideALineIsRefused) {
  const std::string good = SampleHistory();
  for (size_t len = 0; len < good.size(); ++len) {
    const std::string cut = good.substr(0, len);
    absl::StatusOr<History> h = ParseHistory(cut);
    const bool at_line_end = len == 0 || good[len - 1] == '\n' || good[len] == '\n';
    if (at_line_end) {
      // Whole lines: a shorter history, with the last transactions still in progress (info).
      EXPECT_TRUE(h.ok()) << "length " << len << ": " << h.status();
      continue;
    }
    ASSERT_FALSE(h.ok()) << "length " << len << " accepted";
    EXPECT_EQ(ErrorLine(h.status()), LineOf(good, len)) << h.status();
    EXPECT_THAT(std::string(h.status().message()), HasSubstr("bad JSON")) << h.status();
  }
}

TEST(CorruptionTest, DroppedBracketsAreRefused) {
  const std::string good = SampleHistory();
  for (size_t pos = 0; pos < good.size(); ++pos) {
    const char c = good[pos];
    if (c != '[' && c != ']' && c != '{' && c != '}') continue;
    std::string bad = good;
    bad.erase(pos, 1);
    absl::StatusOr<History> h = ParseHistory(bad);
    ASSERT_FALSE(h.ok()) << "without byte " << pos;
    EXPECT_THAT(std::string(h.status().message()), StartsWith(absl::StrCat("line ", LineOf(good, pos), ": bad JSON")));
    // And doubled.
    bad = good;
    bad.insert(pos, 1, c);
    h = ParseHistory(bad);
    ASSERT_FALSE(h.ok()) << "doubled byte " << pos;
    EXPECT_EQ(ErrorLine(h.status()), LineOf(good, pos)) << h.status();
  }
}

TEST(CorruptionTest, MissingFieldsAreRefused) {
  const std::string line = R"({"process":0,"type":"invoke","f":"txn","value":[[":append",1,1]],"time":5})";
  for (const char* field : {"process", "type", "f", "value", "time"}) {
    std::string bad = line;
    const size_t start = bad.find(absl::StrCat("\"", field, "\""));
    size_t end = start;
    int depth = 0;
    // The field runs to the next ',' or '}' outside brackets.
    for (end = bad.find(':', start) + 1; end < bad.size(); ++end) {
      if (bad[end] == '[') ++depth;
      if (bad[end] == ']') --depth;
      if (depth == 0 && (bad[end] == ',' || bad[end] == '}')) break;
    }
    if (bad[end] == ',') {
      bad.erase(start, end - start + 1);
    } else {
      bad.erase(start - 1, end - start + 1);  // the last field: drop the ',' before it
    }
    absl::StatusOr<History> h = ParseHistory(bad);
    ASSERT_FALSE(h.ok()) << bad;
    EXPECT_EQ(h.status().message(), absl::StrCat("line 1: missing field \"", field, "\"")) << bad;
  }
}

TEST(CorruptionTest, BadNumbersAreRefused) {
  const std::string line = R"({"process":0,"type":"invoke","f":"txn","value":[[":append",1,1]],"time":5})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1.5", "expected an integer, got 1.5"},
      {"1e3", "expected an integer, got 1e3"},
      {"\"5\"", "expected an integer, got string \"5\""},
      {"05", "bad JSON, column 73: leading zero"},
      {"9999999999999999999", "9999999999999999999 is outside the 64-bit integer range"},
      {"-", "bad JSON"},
      {"true", "expected an integer, got true"},
      {"[5]", "expected an integer, got array"},
  };
  for (const auto& [number, error] : cases) {
    const std::string bad = absl::StrReplaceAll(line, {{"\"time\":5", absl::StrCat("\"time\":", number)}});
    absl::StatusOr<History> h = ParseHistory(bad);
    ASSERT_FALSE(h.ok()) << bad;
    EXPECT_THAT(std::string(h.status().message()), HasSubstr(error)) << bad;
  }
}

// Changing a type changes what the line means; each lie is caught by the rules of the format, except
// ok -> fail on a transaction without reads, which is a well-formed history the checker then judges.
TEST(CorruptionTest, LyingAboutTypes) {
  auto replace_line = [](const std::string& text, int line, const std::string& from, const std::string& to) {
    std::vector<std::string> lines = absl::StrSplit(text, '\n');
    lines[line - 1] = absl::StrReplaceAll(lines[line - 1], {{from, to}});
    return absl::StrJoin(lines, "\n");
  };
  HistoryBuilder h;
  h.Serial(0, {A(1, 1), R(1, {1})});  // lines 1-2
  h.Serial(1, {A(1, 2)});             // lines 3-4
  h.Serial(0, {R(1, {1, 2})});        // lines 5-6
  const std::string good = h.Text();
  ASSERT_OK(ParseHistory(good).status());

  const std::vector<std::tuple<int, std::string, std::string, std::string>> lies = {
      {2, "\"ok\"", "\"invoke\"", "line 2: field \"value\", micro-op 2: the read of an invoke must be null"},
      {4, "\"ok\"", "\"invoke\"", "line 4: process 1 invoked again while its invoke on line 3"},
      {1, "\"invoke\"", "\"ok\"", "line 1: field \"value\", micro-op 2: an ok completion's read must be a list"},
      {3, "\"invoke\"", "\"ok\"", "line 3: ok completion of process 1, which has no invoke in progress"},
      {2, "\"ok\"", "\"fail\"", "line 2: field \"value\", micro-op 2: the read of a fail completion must be null"},
      {6, "\"ok\"", "\"info\"", "line 6: field \"value\", micro-op 1: the read of an info completion must be null"},
      {1, "\"process\":0", "\"process\":1", "line 2: ok completion of process 0, which has no invoke in progress"},
      {2, "\"f\":\"txn\"", "\"f\":\"read\"", "line 2: field \"f\": expected \"txn\""},
  };
  for (const auto& [line, from, to, error] : lies) {
    const std::string bad = replace_line(good, line, from, to);
    absl::StatusOr<History> parsed = ParseHistory(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(error));
  }

  // ok -> fail on T1, which only appends: well-formed, and T2's read of its value is an aborted read.
  ASSERT_OK_AND_ASSIGN(History lied, ParseHistory(replace_line(good, 4, "\"ok\"", "\"fail\"")));
  EXPECT_TRUE(CheckHistory(lied).Has(AnomalyType::kG1a));
}

TEST(CorruptionTest, RandomBytesNeverCrashAndAlwaysNameALine) {
  const std::string good = SampleHistory();
  const uint32_t seed = 20240611;
  std::mt19937 rng(seed);
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  for (int round = 0; round < 3000; ++round) {
    std::string bad = good;
    const int changes = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < changes; ++i) {
      switch (rng() % 3) {
        case 0:
          bad[rng() % bad.size()] = static_cast<char>(rng());
          break;
        case 1:
          bad.erase(rng() % bad.size(), 1 + rng() % 8);
          break;
        default:
          bad.insert(rng() % bad.size(), 1, static_cast<char>(rng()));
      }
      if (bad.empty()) bad = "x";
    }
    absl::StatusOr<History> h = ParseHistory(bad);
    if (h.ok()) {
      CheckHistory(*h);  // whatever was accepted must still be checkable
      continue;
    }
    EXPECT_GE(ErrorLine(h.status()), 1) << h.status();
  }
}

}  // namespace
}  // namespace fathom::history
