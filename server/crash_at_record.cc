#include "server/crash_at_record.h"

#include <array>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fathom::server {
namespace {

constexpr std::array<std::pair<const char*, txn::RecordKind>, 5> kKinds = {{
    {"lock", txn::RecordKind::kLock},
    {"commit_backup", txn::RecordKind::kCommitBackup},
    {"commit_primary", txn::RecordKind::kCommitPrimary},
    {"abort", txn::RecordKind::kAbort},
    {"truncate", txn::RecordKind::kTruncate},
}};

}  // namespace

absl::StatusOr<CrashAtRecord> ParseCrashAtRecord(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("--crash_at_record=", std::string(text), ": expected KIND:N"));
  }
  const std::string kind(text.substr(0, colon));
  CrashAtRecord crash;
  bool known = false;
  for (const auto& [name, value] : kKinds) {
    if (kind == name) {
      crash.kind = value;
      known = true;
    }
  }
  if (!known) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--crash_at_record: unknown record kind '", kind, "' (one of: lock, commit_backup, commit_primary, abort, truncate)"));
  }
  const std::string count(text.substr(colon + 1));
  if (!absl::SimpleAtoi(count, &crash.count) || crash.count == 0) {
    return absl::InvalidArgumentError(absl::StrCat("--crash_at_record: '", count, "' is not a positive count"));
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
