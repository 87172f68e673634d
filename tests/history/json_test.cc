#include "tests/history/json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"

namespace fathom::history {
namespace {

using ::testing::HasSubstr;

void ExpectError(absl::string_view text, const std::string& what) {
  absl::StatusOr<JsonValue> v = ParseJson(text);
  ASSERT_FALSE(v.ok()) << "accepted: " << text;
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(v.status().message()), HasSubstr(what)) << text;
}

TEST(JsonTest, Scalars) {
  ASSERT_OK_AND_ASSIGN(JsonValue v, ParseJson(" null "));
  EXPECT_EQ(v.kind, JsonValue::Kind::kNull);
  ASSERT_OK_AND_ASSIGN(v, ParseJson("true"));
  EXPECT_TRUE(v.boolean);
  ASSERT_OK_AND_ASSIGN(v, ParseJson("false"));
  EXPECT_EQ(v.kind, JsonValue::Kind::kBool);
  EXPECT_FALSE(v.boolean);
}

TEST(JsonTest, Integers) {
  ASSERT_OK_AND_ASSIGN(JsonValue v, ParseJson("-0"));
  EXPECT_EQ(v.integer, 0);
  ASSERT_OK_AND_ASSIGN(v, ParseJson("9223372036854775807"));
  EXPECT_EQ(v.integer, INT64_MAX);
  ASSERT_OK_AND_ASSIGN(v, ParseJson("-9223372036854775808"));
  EXPECT_EQ(v.integer, INT64_MIN);
  // Valid JSON numbers that are not int64 integers keep their text and no integer.
  for (const char* text : {"9223372036854775808", "-9223372036854775809", "99999999999999999999999", "1.0",
                           "1e3", "-2.5E-3"}) {
    ASSERT_OK_AND_ASSIGN(v, ParseJson(text));
    EXPECT_EQ(v.kind, JsonValue::Kind::kNumber) << text;
    EXPECT_FALSE(v.integer.has_value()) << text;
    EXPECT_EQ(v.text, text);
  }
}

TEST(JsonTest, BadNumbers) {
  ExpectError("01", "column 1: leading zero");
  ExpectError("-", "column 2: expected a digit, got end of line");
  ExpectError("-a", "column 2: expected a digit, got 'a'");
  ExpectError("1.", "column 3: expected a digit after '.'");
  ExpectError("1.e5", "expected a digit after '.'");
  ExpectError("1e", "expected a digit in the exponent");
  ExpectError("1e+", "expected a digit in the exponent");
  ExpectError(".5", "expected a value, got '.'");
  ExpectError("+5", "expected a value, got '+'");
  ExpectError("1 2", "column 3: unexpected '2' after the value");
  ExpectError("Infinity", "expected a value, got 'I'");
}

TEST(JsonTest, Strings) {
  ASSERT_OK_AND_ASSIGN(JsonValue v, ParseJson(R"("a\"b\\c\/d\n\t\u0041\u00e9\ud83d\ude00")"));
  EXPECT_EQ(v.kind, JsonValue::Kind::kString);
  EXPECT_EQ(v.text, "a\"b\\c/d\n\tA\xc3\xa9\xf0\x9f\x98\x80");
  ASSERT_OK_AND_ASSIGN(v, ParseJson(R"("\u0074xn")"));
  EXPECT_EQ(v.text, "txn");
}

TEST(JsonTest, BadStrings) {
  ExpectError(R"("abc)", "column 1: unterminated string");
  ExpectError(R"("abc\)", "unterminated string");
  ExpectError(R"("\x")", "column 3: invalid escape \\'x'");
  ExpectError(R"("\u12")", "column 4: truncated \\u escape");
  ExpectError(R"("\u12G4")", "column 6: expected a hex digit in a \\u escape, got 'G'");
  ExpectError(R"("\ud83d")", "high surrogate not followed by a \\u low surrogate");
  ExpectError(R"("\ud83d\u0041")", "high surrogate not followed by a low surrogate");
  ExpectError(R"("\ude00")", "unpaired low surrogate");
  ExpectError("\"a\tb\"", "column 3: byte 0x09 inside a string");
  ExpectError("\"\xc3\xa9\"", "column 2: byte 0xC3 inside a string");
  ExpectError(std::string("\"a\0b\"", 5), "byte 0x00 inside a string");
}

TEST(JsonTest, ArraysAndObjects) {
  ASSERT_OK_AND_ASSIGN(JsonValue v, ParseJson(R"({"a": [1, [2, null], {}], "b": "x", "c": []})"));
  ASSERT_EQ(v.kind, JsonValue::Kind::kObject);
  ASSERT_EQ(v.members.size(), 3u);
  EXPECT_EQ(v.members[0].first, "a");
  const JsonValue& a = v.members[0].second;
  ASSERT_EQ(a.items.size(), 3u);
  EXPECT_EQ(a.items[0].integer, 1);
  EXPECT_EQ(a.items[1].items[1].kind, JsonValue::Kind::kNull);
  EXPECT_EQ(a.items[2].kind, JsonValue::Kind::kObject);
  EXPECT_EQ(a.column, 7);
  EXPECT_EQ(v.members[2].second.items.size(), 0u);
}

TEST(JsonTest, BadStructure) {
  ExpectError("", "column 1: expected a value, got end of line");
  ExpectError("[1,]", "column 4: expected a value, got ']'");
  ExpectError("[1 2]", "column 4: expected ',' or ']' in an array, got '2'");
  ExpectError("[1", "column 3: expected ',' or ']' in an array, got end of line");
  ExpectError("[[1]", "expected ',' or ']' in an array, got end of line");
  ExpectError("[1]]", "column 4: unexpected ']' after the value");
  ExpectError("{\"a\":1,}", "column 8: expected a field name in quotes, got '}'");
  ExpectError("{\"a\" 1}", "column 6: expected ':' after a field name, got '1'");
  ExpectError("{\"a\":1 \"b\":2}", "expected ',' or '}' in an object, got '\"'");
  ExpectError("{a:1}", "expected a field name in quotes, got 'a'");
  ExpectError("{\"a\":1,\"a\":2}", "column 8: duplicate field \"a\"");
  ExpectError("{\"a\":}", "column 6: expected a value, got '}'");
  ExpectError("nul", "expected a value, got 'n'");
  ExpectError("[1] // comment", "unexpected '/' after the value");
  ExpectError("\xef\xbb\xbf[]", "expected a value, got byte 0xEF");
}

TEST(JsonTest, DepthIsLimited) {
  std::string deep(kMaxJsonDepth, '[');
  deep += std::string(kMaxJsonDepth, ']');
  ASSERT_OK(ParseJson(deep).status());
  std::string deeper(kMaxJsonDepth + 1, '[');
  deeper += std::string(kMaxJsonDepth + 1, ']');
  ExpectError(deeper, "nesting deeper than 8");
  // Far deeper input fails the same way instead of exhausting the stack.
  ExpectError(std::string(1 << 20, '['), "nesting deeper than 8");
}

}  // namespace
}  // namespace fathom::history
