#include "bench/ycsb/crash_at_step.h"

#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

TEST(CrashAtStepTest, ParsesAStepAndACount) {
  absl::StatusOr<CrashAtStep> crash = ParseCrashAtStep("commit_primary:300");
  ASSERT_TRUE(crash.ok()) << crash.status();
  EXPECT_EQ(crash->step, "commit_primary");
  EXPECT_EQ(crash->count, 300u);
}

TEST(CrashAtStepTest, BadInputGetsAClearError) {
  for (const char* bad : {"", "commit_primary", "commit_primary:", "commit_primary:0", "commit_primary:-1",
                          "commit_primary:3x", "commit:3", ":3", "lock:99999999999999999999999"}) {
    SCOPED_TRACE(bad);
    absl::StatusOr<CrashAtStep> crash = ParseCrashAtStep(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(crash.status())) << crash.status();
  }
  EXPECT_NE(ParseCrashAtStep("commit:3").status().message().find("unknown step 'commit'"), std::string::npos);
}

TEST(CrashAtStepTest, KillsAtTheNthTimeTheStepIsReachedAndOnlyThen) {
  int kills = 0;
  auto hook = CrashHook({.step = "truncate", .count = 3}, [&] { ++kills; });
  hook("lock");
  hook("truncate");
  hook("commit_primary");
  hook("truncate");
  EXPECT_EQ(kills, 0);
  hook("truncate");
  EXPECT_EQ(kills, 1);
  hook("truncate");
  EXPECT_EQ(kills, 1);
}

}  // namespace
}  // namespace fathom::ycsb
