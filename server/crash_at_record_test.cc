#include "server/crash_at_record.h"

#include <atomic>

#include "gtest/gtest.h"

namespace fathom::server {
namespace {

TEST(CrashAtRecordTest, ParsesKindAndCount) {
  absl::StatusOr<CrashAtRecord> crash = ParseCrashAtRecord("commit_backup:300");
  ASSERT_TRUE(crash.ok()) << crash.status();
  EXPECT_EQ(crash->kind, txn::RecordKind::kCommitBackup);
  EXPECT_EQ(crash->count, 300u);
  EXPECT_EQ(ParseCrashAtRecord("truncate:1")->kind, txn::RecordKind::kTruncate);
}

TEST(CrashAtRecordTest, BadValuesAreClearErrors) {
  for (const char* bad : {"", "lock", "lock:", "lock:0", "lock:-3", "lock:x", "validate:3", ":3", "LOCK:3"}) {
    absl::StatusOr<CrashAtRecord> crash = ParseCrashAtRecord(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(crash.status())) << bad;
  }
  EXPECT_NE(ParseCrashAtRecord("validate:3").status().message().find("unknown record kind 'validate'"),
            std::string::npos);
}

TEST(CrashAtRecordTest, KillsAtTheNthRecordOfItsKindOnceArmed) {
  std::atomic<bool> armed{false};
  int kills = 0;
  auto hook = CrashAtRecordHook({txn::RecordKind::kCommitPrimary, 3}, &armed, [&] { ++kills; });
  for (int i = 0; i < 5; ++i) hook(txn::RecordKind::kCommitPrimary);  // not armed: not counted
  EXPECT_EQ(kills, 0);
  armed = true;
  hook(txn::RecordKind::kCommitPrimary);
  hook(txn::RecordKind::kLock);  // another kind
  hook(txn::RecordKind::kCommitPrimary);
  EXPECT_EQ(kills, 0);
  hook(txn::RecordKind::kCommitPrimary);
  EXPECT_EQ(kills, 1);
  hook(txn::RecordKind::kCommitPrimary);
  EXPECT_EQ(kills, 1);  // only the Nth
}

}  // namespace
}  // namespace fathom::server
