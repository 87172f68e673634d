#include "resp/request_parser.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"

namespace fathom::resp {
namespace {

using ::testing::HasSubstr;
using namespace std::string_literals;

// Every command the bytes hold, or the first error.
absl::StatusOr<std::vector<Command>> ParseAll(const std::string& bytes, ParserLimits limits = {}) {
  RequestParser parser(limits);
  parser.Feed(bytes);
  std::vector<Command> commands;
  while (true) {
    absl::StatusOr<std::optional<Command>> next = parser.Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) return commands;
    commands.push_back(**next);
  }
}

TEST(RequestParserTest, ArraysOfBulkStringsAndInlineCommands) {
  ASSERT_OK_AND_ASSIGN(std::vector<Command> commands,
                       ParseAll("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\na\r\nb\0\r\n"
                                "PING\r\n"
                                "  set  x   y \n"
                                "*0\r\n\r\n"
                                "*1\r\n$0\r\n\r\n"s));
  ASSERT_EQ(commands.size(), 4u);
  EXPECT_EQ(commands[0], (Command{"SET", "k", std::string("a\r\nb\0", 5)}));
  EXPECT_EQ(commands[1], (Command{"PING"}));
  EXPECT_EQ(commands[2], (Command{"set", "x", "y"}));
  EXPECT_EQ(commands[3], (Command{""}));
}

TEST(RequestParserTest, ACommandArrivingByteByByteComesOutWhole) {
  const std::string bytes = "*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\n*1\r\n$4\r\nPING\r\n";
  RequestParser parser;
  std::vector<Command> commands;
  for (char c : bytes) {
    parser.Feed(std::string(1, c));
    ASSERT_OK_AND_ASSIGN(std::optional<Command> next, parser.Next());
    if (next.has_value()) commands.push_back(*next);
  }
  EXPECT_EQ(commands, (std::vector<Command>{{"GET", "0123456789"}, {"PING"}}));
  EXPECT_EQ(parser.buffered(), 0u);
}

TEST(RequestParserTest, MalformedInputIsAProtocolError) {
  for (const std::string& bad : {
           std::string("*x\r\n"),                          // not a number
           std::string("*-2\r\n"),                         // negative
           std::string("*1\r\n:5\r\n"),                    // an element that is not a bulk string
           std::string("*1\r\n$-1\r\n"),                   // a null bulk in a request
           std::string("*1\r\n$3\r\nabcd\r\n"),            // the bulk is longer than it says
           std::string("*1\r\n$3\r\nab\r\n\r\n"),          // shorter than it says: no CRLF where it should be
           std::string("*1\n$3\nGET\n"),                   // bare LF in an array
           std::string("*1\r\n$99999999999999999999\r\n"),  // a length of 20 digits
           std::string("*1\r\n$+3\r\nGET\r\n"),
       }) {
    absl::StatusOr<std::vector<Command>> parsed = ParseAll(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status()));
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("Protocol error")) << bad;
  }
}

TEST(RequestParserTest, LengthsOverTheLimitsAreRefusedBeforeTheirBytesArrive) {
  ParserLimits limits;
  limits.max_args = 3;
  limits.max_bulk_bytes = 10;
  limits.max_inline_bytes = 16;
  EXPECT_FALSE(ParseAll("*4\r\n", limits).ok());
  EXPECT_FALSE(ParseAll("*1\r\n$11\r\n", limits).ok());  // only the header: refused at once
  EXPECT_FALSE(ParseAll(std::string(17, 'a'), limits).ok());  // an inline line with no end yet
  EXPECT_FALSE(ParseAll(std::string(20, 'a') + "\r\n", limits).ok());
  ASSERT_OK_AND_ASSIGN(std::vector<Command> fits, ParseAll("*3\r\n$10\r\n0123456789\r\n$0\r\n\r\n$1\r\nx\r\n", limits));
  EXPECT_EQ(fits.size(), 1u);
}

TEST(RequestParserTest, AnIncompleteCommandWaitsForMore) {
  for (const char* partial : {"*2\r\n$3\r\nGET\r\n", "*2\r\n$3\r\nGE", "*2", "PING"}) {
    ASSERT_OK_AND_ASSIGN(std::vector<Command> commands, ParseAll(partial));
    EXPECT_TRUE(commands.empty()) << partial;
  }
}

}  // namespace
}  // namespace fathom::resp
