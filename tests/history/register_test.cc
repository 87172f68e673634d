#include "tests/history/register.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"

namespace fathom::history {
namespace {

using Op = RegisterOp;

TEST(RegisterTest, ReadsOfTheLastWriteAreLinearizable) {
  EXPECT_OK(CheckRegister({Op::Read(std::nullopt, 0, 1), Op::Write("a", 2, 3), Op::Read("a", 4, 5),
                           Op::Write("b", 6, 7), Op::Read("b", 8, 9)}));
}

TEST(RegisterTest, AStaleReadIsNot) {
  const absl::Status s = CheckRegister({Op::Write("a", 0, 1), Op::Write("b", 2, 3), Op::Read("a", 4, 5)});
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("read \"a\" [4, 5]"), std::string::npos) << s;
}

TEST(RegisterTest, AReadOfANeverWrittenValueIsNot) {
  EXPECT_TRUE(absl::IsFailedPrecondition(CheckRegister({Op::Write("a", 0, 1), Op::Read("z", 2, 3)})));
}

TEST(RegisterTest, AnAbsentReadAfterAWriteEndedIsNot) {
  EXPECT_TRUE(absl::IsFailedPrecondition(CheckRegister({Op::Write("a", 0, 1), Op::Read(std::nullopt, 2, 3)})));
}

TEST(RegisterTest, AReadConcurrentWithAWriteMaySeeEitherValue) {
  EXPECT_OK(CheckRegister({Op::Write("a", 0, 1), Op::Write("b", 2, 10), Op::Read("a", 3, 4), Op::Read("b", 5, 6)}));
  EXPECT_OK(CheckRegister({Op::Write("a", 0, 1), Op::Write("b", 2, 10), Op::Read("b", 3, 4)}));
}

TEST(RegisterTest, ValuesSeenCannotFlipBack) {
  // Both reads overlap the write, but once one saw "b" a later one cannot see "a" again.
  const absl::Status s =
      CheckRegister({Op::Write("a", 0, 1), Op::Write("b", 2, 20), Op::Read("b", 3, 4), Op::Read("a", 5, 6)});
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
}

TEST(RegisterTest, AnUnansweredWriteMayHaveHappenedOrNot) {
  EXPECT_OK(CheckRegister({Op::Write("a", 0, 1), Op::Write("b", 2, std::nullopt), Op::Read("a", 5, 6)}));
  EXPECT_OK(CheckRegister({Op::Write("a", 0, 1), Op::Write("b", 2, std::nullopt), Op::Read("b", 5, 6)}));
  // ... but not before it was invoked.
  EXPECT_TRUE(absl::IsFailedPrecondition(
      CheckRegister({Op::Write("a", 0, 1), Op::Read("b", 2, 3), Op::Write("b", 4, std::nullopt)})));
}

TEST(RegisterTest, ABadOperationIsRefused) {
  EXPECT_TRUE(absl::IsInvalidArgument(CheckRegister({Op{Op::Kind::kRead, "a", 0, std::nullopt, ""}})));
  EXPECT_TRUE(absl::IsInvalidArgument(CheckRegister({Op::Write("a", 5, 4)})));
  EXPECT_TRUE(absl::IsInvalidArgument(CheckRegister({Op{Op::Kind::kWrite, std::nullopt, 0, 1, ""}})));
}

TEST(RegisterTest, TheLabelNamesWhoReadStale) {
  std::vector<Op> ops = {Op::Write("a", 0, 1), Op::Write("b", 2, 3), Op::Read("a", 4, 5)};
  ops[2].label = "node 3 thread 1";
  EXPECT_NE(CheckRegister(ops).message().find("by node 3 thread 1"), std::string::npos);
}

TEST(RegisterTest, ManyConcurrentOperationsAreCheckedWithinTheBudget) {
  // 8 processes, each writing its own values and reading, all overlapping in groups: the memo keeps it small.
  std::vector<Op> ops;
  for (int round = 0; round < 6; ++round) {
    for (int p = 0; p < 8; ++p) {
      const int64_t start = round * 100 + p;
      ops.push_back(Op::Write(absl::StrCat("v", round, "-", p), start, start + 50));
    }
    ops.push_back(Op::Read(absl::StrCat("v", round, "-7"), round * 100 + 60, round * 100 + 70));
  }
  EXPECT_OK(CheckRegister(ops));
}

TEST(RegisterTest, TooBigASearchSaysSo) {
  std::vector<Op> ops;
  for (int p = 0; p < 12; ++p) ops.push_back(Op::Write(absl::StrCat("v", p), 0, 100));
  ops.push_back(Op::Read("never", 0, 100));
  EXPECT_TRUE(absl::IsResourceExhausted(CheckRegister(ops, /*max_states=*/1000)));
}

}  // namespace
}  // namespace fathom::history
