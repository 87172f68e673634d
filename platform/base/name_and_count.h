// "NAME:N", the form of the tests-only fault flags (ycsb --crash_at_step, fathomd --crash_at_record): one
// of a known set of names and a positive count.
#ifndef FATHOM_PLATFORM_BASE_NAME_AND_COUNT_H_
#define FATHOM_PLATFORM_BASE_NAME_AND_COUNT_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fathom {

struct NameAndCount {
  std::string name;    // one of the names given
  uint64_t count = 0;  // >= 1
};

// Parses `text`, the value of --`flag`; InvalidArgument naming the flag and what is wrong (no colon, a name
// not in `names`, called a `what` in the message, or a count that is not a positive integer).
absl::StatusOr<NameAndCount> ParseNameAndCount(std::string_view flag, std::string_view what, std::string_view text,
                                               std::span<const char* const> names);

}  // namespace fathom

#endif  // FATHOM_PLATFORM_BASE_NAME_AND_COUNT_H_
