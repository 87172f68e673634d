#include "platform/base/name_and_count.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fathom {

absl::StatusOr<NameAndCount> ParseNameAndCount(std::string_view flag, std::string_view what, std::string_view text,
                                               std::span<const char* const> names) {
  // Debian's Abseil has a string_view of its own: std::string for its calls.
  const std::string flag_name(flag), what_name(what);
  const std::string choices = absl::StrJoin(names.begin(), names.end(), ", ");
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag_name, "=", std::string(text), ": expected ", what_name,
                                                   ":N (", what_name, " one of: ", choices, ")"));
  }
  NameAndCount parsed;
  parsed.name = std::string(text.substr(0, colon));
  bool known = false;
  for (const char* name : names) known = known || parsed.name == name;
  if (!known) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag_name, ": unknown ", what_name, " '", parsed.name, "' (one of: ", choices, ")"));
  }
  const std::string count(text.substr(colon + 1));
  if (!absl::SimpleAtoi(count, &parsed.count) || parsed.count == 0) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag_name, ": '", count, "' is not a positive count"));
  }
  return parsed;
}

}  // namespace fathom
