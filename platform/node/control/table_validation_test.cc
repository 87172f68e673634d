// The table calls' request rules: names, kinds and sizes, each refused with a message naming the field.
#include "platform/node/control/table_validation.h"

#include <string>

#include "gtest/gtest.h"

namespace fathom::control {
namespace {

TEST(TableValidationTest, Names) {
  EXPECT_TRUE(ValidateTableName("usertable").ok());
  EXPECT_TRUE(ValidateTableName("a.b-c_D9").ok());
  EXPECT_TRUE(ValidateTableName(std::string(kMaxTableNameBytes, 'x')).ok());
  for (const std::string& bad : {std::string(""), std::string(".hidden"), std::string("has space"),
                                std::string("slash/name"), std::string("nul\0byte", 8), std::string("caf\xc3\xa9"),
                                std::string(kMaxTableNameBytes + 1, 'x')}) {
    absl::Status s = ValidateTableName(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_NE(s.message().find("table name"), absl::string_view::npos) << s;
  }
}

TEST(TableValidationTest, CreateRequests) {
  CreateTableRequest r;
  r.set_name("t");
  EXPECT_TRUE(ValidateCreateTableRequest(r).ok());  // every number 0: kv's defaults
  r.set_kind(TABLE_INDEX_CUCKOO);
  r.set_buckets(3);
  EXPECT_TRUE(ValidateCreateTableRequest(r).ok());
  r.set_buckets(2);
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateCreateTableRequest(r)));  // cuckoo needs 3
  r.set_kind(TABLE_INDEX_HOPSCOTCH);
  EXPECT_TRUE(ValidateCreateTableRequest(r).ok());
  r.set_buckets(kMaxTableBuckets + 1);
  EXPECT_NE(ValidateCreateTableRequest(r).message().find("buckets"), absl::string_view::npos);
  r.set_buckets(0);
  r.set_kind(static_cast<TableIndexKind>(7));
  EXPECT_NE(ValidateCreateTableRequest(r).message().find("kind"), absl::string_view::npos);
  r.set_kind(TABLE_INDEX_UNSPECIFIED);
  r.set_inline_bytes(16385);
  EXPECT_NE(ValidateCreateTableRequest(r).message().find("inline_bytes"), absl::string_view::npos);
  r.set_inline_bytes(0);
  r.set_max_key_bytes(65536);
  EXPECT_NE(ValidateCreateTableRequest(r).message().find("max_key_bytes"), absl::string_view::npos);
  r.set_max_key_bytes(0);
  r.set_name("bad name");
  EXPECT_NE(ValidateCreateTableRequest(r).message().find("table name"), absl::string_view::npos);
}

TEST(TableValidationTest, ResizeRequests) {
  ResizeTableRequest r;
  r.set_name("t");
  EXPECT_TRUE(ValidateResizeTableRequest(r).ok());  // 0: twice the current count
  r.set_buckets(2);
  EXPECT_TRUE(ValidateResizeTableRequest(r).ok());  // a cuckoo table refuses 2 in kv (its kind is not here)
  r.set_buckets(kMaxTableBuckets);
  EXPECT_TRUE(ValidateResizeTableRequest(r).ok());
  for (uint64_t bad : {uint64_t{1}, kMaxTableBuckets + 1, ~uint64_t{0}}) {
    r.set_buckets(bad);
    absl::Status s = ValidateResizeTableRequest(r);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_NE(s.message().find("buckets"), absl::string_view::npos) << s;
  }
  r.set_buckets(0);
  r.set_name("");
  EXPECT_NE(ValidateResizeTableRequest(r).message().find("table name"), absl::string_view::npos);
}

}  // namespace
}  // namespace fathom::control
