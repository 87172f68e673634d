#include "bench/ycsb/crash_at_step.h"

#include <array>
#include <atomic>
#include <memory>
#include <string>

#include "platform/base/name_and_count.h"

namespace fathom::ycsb {
namespace {

// Debian's absl has a string_view of its own: the names as C strings.
constexpr std::array<const char*, 7> kSteps = {"lock",     "validate",          "commit_backup", "commit_primary",
                                               "truncate", "truncate_withheld", "abort"};

}  // namespace

absl::StatusOr<CrashAtStep> ParseCrashAtStep(std::string_view text) {
  absl::StatusOr<NameAndCount> parsed = ParseNameAndCount("crash_at_step", "step", text, kSteps);
  if (!parsed.ok()) return parsed.status();
  return CrashAtStep{parsed->name, parsed->count};
}

std::function<void(std::string_view step)> CrashHook(const CrashAtStep& crash, std::function<void()> kill) {
  auto reached = std::make_shared<std::atomic<uint64_t>>(0);
  return [step = crash.step, count = crash.count, reached, kill = std::move(kill)](std::string_view at) {
    if (at == step && reached->fetch_add(1) + 1 == count) kill();
  };
}

}  // namespace fathom::ycsb
