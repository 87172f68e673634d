// fathomctl get/put/delete: what the command line may say (the calls themselves run against a cluster in
// fathomctl_data_test).
#include "tools/fathomctl/data_commands.h"

#include <sstream>

#include "gtest/gtest.h"

namespace fathom::fathomctl {
namespace {

absl::StatusOr<DataCommand> Parse(std::vector<std::string> args, const std::string& input = "") {
  std::istringstream in(input);
  return ParseDataCommand(args, in);
}

TEST(DataCommandsTest, ParsesEachVerb) {
  absl::StatusOr<DataCommand> get = Parse({"get", "users", "alice"});
  ASSERT_TRUE(get.ok()) << get.status();
  EXPECT_EQ(get->verb, "get");
  EXPECT_EQ(get->table, "users");
  EXPECT_EQ(get->key, "alice");
  absl::StatusOr<DataCommand> put = Parse({"put", "users", "alice", "42"});
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(put->value, "42");
  absl::StatusOr<DataCommand> del = Parse({"delete", "users", "alice"});
  ASSERT_TRUE(del.ok()) << del.status();
  EXPECT_EQ(del->verb, "delete");
}

// "-" takes all of standard input as the value, byte for byte (newlines and zero bytes included).
TEST(DataCommandsTest, APutValueOfDashIsStandardInput) {
  const std::string bytes("line 1\nline 2\n\0tail", 19);
  absl::StatusOr<DataCommand> put = Parse({"put", "t", "k", "-"}, bytes);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(put->value, bytes);
}

TEST(DataCommandsTest, RefusesWrongArguments) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {},
           {"scan", "t"},
           {"get", "t"},
           {"get", "t", "k", "extra"},
           {"put", "t", "k"},
           {"delete"},
           {"get", "", "k"},
           {"put", "t", "", "v"},
       }) {
    absl::StatusOr<DataCommand> parsed = Parse(args);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << args.size() << " args";
    EXPECT_FALSE(parsed.status().message().empty());
  }
}

}  // namespace
}  // namespace fathom::fathomctl
