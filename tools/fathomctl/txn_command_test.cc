// fathomctl txn: what a script may say (it runs against a real cluster in tools:cluster_test).
#include "tools/fathomctl/txn_command.h"

#include <sstream>

#include "gtest/gtest.h"

namespace fathom::fathomctl {
namespace {

absl::StatusOr<std::vector<TxnOperation>> Parse(const std::string& script, const std::string& input = "") {
  std::istringstream in(input);
  return ParseTxnScript({"txn", script}, in);
}

TEST(TxnCommandTest, ParsesOperationsSeparatedBySemicolonsOrLines) {
  auto ops = Parse("get accounts alice; put accounts bob 110 ;delete  accounts carol\nput t k a value with spaces");
  ASSERT_TRUE(ops.ok()) << ops.status();
  ASSERT_EQ(ops->size(), 4u);
  EXPECT_EQ((*ops)[0].verb, "get");
  EXPECT_EQ((*ops)[0].table, "accounts");
  EXPECT_EQ((*ops)[0].key, "alice");
  EXPECT_EQ((*ops)[1].verb, "put");
  EXPECT_EQ((*ops)[1].value, "110");
  EXPECT_EQ((*ops)[2].verb, "delete");
  EXPECT_EQ((*ops)[2].key, "carol");
  EXPECT_EQ((*ops)[3].value, "a value with spaces");
}

// From standard input: one per line, so a value may hold ';'; blank lines and comments are skipped.
TEST(TxnCommandTest, StandardInputIsOneOperationPerLine) {
  auto ops = Parse("-", "# move money\n\nput t k a;b\n  get t k  \n");
  ASSERT_TRUE(ops.ok()) << ops.status();
  ASSERT_EQ(ops->size(), 2u);
  EXPECT_EQ((*ops)[0].value, "a;b");
  EXPECT_EQ((*ops)[1].verb, "get");
}

TEST(TxnCommandTest, RefusesBadScriptsNamingTheOperation) {
  struct Case {
    std::string script;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {"", "no operation"},
           {" ; # nothing\n", "no operation"},
           {"get t k; scan t", "operation 2 ('scan t'): unknown operation 'scan'"},
           {"get t", "operation 1 ('get t'): give get TABLE KEY"},
           {"put t k", "give put TABLE KEY VALUE"},
           {"delete t k extra", "unexpected 'extra' after the key"},
           {"get t k v", "unexpected 'v'"},
       }) {
    auto ops = Parse(c.script);
    ASSERT_EQ(ops.status().code(), absl::StatusCode::kInvalidArgument) << c.script;
    EXPECT_NE(ops.status().message().find(c.says), std::string::npos) << ops.status();
  }
  std::istringstream in;
  EXPECT_EQ(ParseTxnScript({"txn"}, in).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseTxnScript({"txn", "get t k", "extra"}, in).status().code(), absl::StatusCode::kInvalidArgument);
  std::string many;
  for (size_t i = 0; i <= kMaxTxnOperations; ++i) many += "get t k;";
  EXPECT_NE(Parse(many).status().message().find("more than 1000 operations"), std::string::npos);
}

}  // namespace
}  // namespace fathom::fathomctl
