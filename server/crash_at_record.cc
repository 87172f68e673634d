#include "server/crash_at_record.h"

#include <array>
#include <memory>
#include <utility>

#include "platform/base/name_and_count.h"

namespace fathom::server {
namespace {

// The names in RecordKind's order, kLock = 1 to kTruncate = 5.
constexpr std::array<const char*, 5> kKinds = {"lock", "commit_backup", "commit_primary", "abort", "truncate"};
static_assert(static_cast<int>(txn::RecordKind::kLock) == 1 && static_cast<int>(txn::RecordKind::kCommitBackup) == 2 &&
              static_cast<int>(txn::RecordKind::kCommitPrimary) == 3 && static_cast<int>(txn::RecordKind::kAbort) == 4 &&
              static_cast<int>(txn::RecordKind::kTruncate) == 5);

}  // namespace

absl::StatusOr<CrashAtRecord> ParseCrashAtRecord(std::string_view text) {
  absl::StatusOr<NameAndCount> parsed = ParseNameAndCount("crash_at_record", "record kind", text, kKinds);
  if (!parsed.ok()) return parsed.status();
  CrashAtRecord crash;
  crash.count = parsed->count;
  for (size_t i = 0; i < kKinds.size(); ++i) {
    if (parsed->name == kKinds[i]) crash.kind = static_cast<txn::RecordKind>(i + 1);
  }
  return crash;
}

std::function<void(txn::RecordKind)> CrashAtRecordHook(const CrashAtRecord& crash, const std::atomic<bool>* armed,
                                                       std::function<void()> kill) {
  auto handled = std::make_shared<std::atomic<uint64_t>>(0);
  return [crash, armed, handled, kill = std::move(kill)](txn::RecordKind kind) {
    if (kind != crash.kind || !armed->load(std::memory_order_acquire)) return;
    if (handled->fetch_add(1) + 1 == crash.count) kill();
  };
}

}  // namespace fathom::server
