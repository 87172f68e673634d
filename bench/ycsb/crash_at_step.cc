#include "bench/ycsb/crash_at_step.h"

#include <array>
#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fathom::ycsb {
namespace {

// Debian's absl has a string_view of its own: the names as C strings.
constexpr std::array<const char*, 7> kSteps = {"lock",     "validate",          "commit_backup", "commit_primary",
                                               "truncate", "truncate_withheld", "abort"};

}  // namespace

absl::StatusOr<CrashAtStep> ParseCrashAtStep(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("--crash_at_step=", std::string(text), ": expected STEP:N"));
  }
  CrashAtStep crash;
  crash.step = std::string(text.substr(0, colon));
  bool known = false;
  for (const char* step : kSteps) known = known || crash.step == step;
  if (!known) {
    return absl::InvalidArgumentError(absl::StrCat("--crash_at_step: unknown step '", crash.step,
                                                   "' (one of: ", absl::StrJoin(kSteps, ", "), ")"));
  }
  const std::string count(text.substr(colon + 1));
  if (!absl::SimpleAtoi(count, &crash.count) || crash.count == 0) {
    return absl::InvalidArgumentError(absl::StrCat("--crash_at_step: '", count, "' is not a positive count"));
  }
  return crash;
}

std::function<void(std::string_view step)> CrashHook(const CrashAtStep& crash, std::function<void()> kill) {
  auto reached = std::make_shared<std::atomic<uint64_t>>(0);
  return [step = crash.step, count = crash.count, reached, kill = std::move(kill)](std::string_view at) {
    if (at == step && reached->fetch_add(1) + 1 == count) kill();
  };
}

}  // namespace fathom::ycsb
