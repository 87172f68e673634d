// fathomctl's table output: aligned text and JSON that parses, with kinds by name and problems shown.
#include "tools/fathomctl/table_report.h"

#include "gtest/gtest.h"
#include "tools/fathomctl/json_test_util.h"
#include "server/table_client.h"

namespace fathom::fathomctl {
namespace {

control::TableSummary Table(const std::string& name, control::TableIndexKind kind, uint64_t buckets) {
  control::TableSummary t;
  t.set_name(name);
  t.set_kind(kind);
  t.set_buckets(buckets);
  t.set_epoch(1);
  t.set_inline_bytes(232);
  t.set_max_key_bytes(1024);
  t.set_max_value_bytes(1000);
  return t;
}

TEST(TableReportTest, Text) {
  EXPECT_EQ(FormatTablesText({}), "no tables\n");
  control::TableSummary broken;
  broken.set_name("broken");
  broken.set_kind(control::TABLE_INDEX_CUCKOO);
  broken.set_epoch(2);
  broken.set_problem("DATA_LOSS: root unreadable");
  const std::string text =
      FormatTablesText({Table("users", control::TABLE_INDEX_HOPSCOTCH, 4096), broken});
  EXPECT_NE(text.find("NAME"), std::string::npos) << text;
  EXPECT_NE(text.find("users   hopscotch  4096"), std::string::npos) << text;
  EXPECT_NE(text.find("broken  cuckoo     ?"), std::string::npos) << text;
  EXPECT_NE(text.find("root unreadable"), std::string::npos) << text;
  EXPECT_EQ(FormatCreatedText(Table("u", control::TABLE_INDEX_CUCKOO, 9)), "created table u: cuckoo, 9 buckets\n");
  control::TableSummary resized = Table("u", control::TABLE_INDEX_CUCKOO, 18);
  resized.set_epoch(3);
  EXPECT_EQ(FormatResizedText(resized), "resized table u: 18 buckets, epoch 3\n");
}

TEST(TableReportTest, Json) {
  SKIP_JSON_CHECKS_UNDER_TSAN();
  const auto parsed = testing::ParseJson(FormatTablesJson({Table("users", control::TABLE_INDEX_CUCKOO, 64)}));
  const auto& tables = parsed.fields().at("tables").list_value();
  ASSERT_EQ(tables.values_size(), 1);
  const auto& t = tables.values(0).struct_value().fields();
  EXPECT_EQ(t.at("name").string_value(), "users");
  EXPECT_EQ(t.at("kind").string_value(), "cuckoo");
  EXPECT_EQ(t.at("buckets").number_value(), 64);
  EXPECT_EQ(t.at("max_value_bytes").number_value(), 1000);
  EXPECT_FALSE(t.contains("problem"));
  const auto created = testing::ParseJson(FormatTableJson(Table("x", control::TABLE_INDEX_HOPSCOTCH, 2)));
  EXPECT_EQ(created.fields().at("table").struct_value().fields().at("kind").string_value(), "hopscotch");
  EXPECT_EQ(testing::ParseJson(FormatTablesJson({})).fields().at("tables").list_value().values_size(), 0);
}

TEST(TableReportTest, Kinds) {
  EXPECT_EQ(*server::ParseTableKind("cuckoo"), control::TABLE_INDEX_CUCKOO);
  EXPECT_EQ(*server::ParseTableKind("hopscotch"), control::TABLE_INDEX_HOPSCOTCH);
  EXPECT_TRUE(absl::IsInvalidArgument(server::ParseTableKind("linear").status()));
}

}  // namespace
}  // namespace fathom::fathomctl
