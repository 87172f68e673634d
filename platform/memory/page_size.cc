#include "platform/memory/page_size.h"

#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fathom::memory {
namespace {

// "7f4a1620a000-7f4a163eb000 rw-s ..." : a mapping's first line.
std::optional<std::pair<uint64_t, uint64_t>> ParseRange(absl::string_view line) {
  const size_t space = line.find(' ');
  if (space == absl::string_view::npos) return std::nullopt;
  std::vector<absl::string_view> ends = absl::StrSplit(line.substr(0, space), '-');
  uint64_t begin = 0, end = 0;
  if (ends.size() != 2 || !absl::SimpleHexAtoi(ends[0], &begin) || !absl::SimpleHexAtoi(ends[1], &end) ||
      begin >= end) {
    return std::nullopt;
  }
  return std::make_pair(begin, end);
}

}  // namespace

absl::StatusOr<std::vector<uint64_t>> KernelPageBytesIn(std::string_view smaps,
                                                        std::span<const void* const> addresses) {
  std::vector<uint64_t> pages(addresses.size(), 0);
  std::optional<std::pair<uint64_t, uint64_t>> range;  // the mapping whose fields follow
  for (absl::string_view line : absl::StrSplit(absl::string_view(smaps.data(), smaps.size()), '\n')) {
    if (line.empty()) continue;
    if (auto r = ParseRange(line); r.has_value()) {
      range = r;
      continue;
    }
    if (!absl::ConsumePrefix(&line, "KernelPageSize:")) continue;
    if (!range.has_value()) return absl::InvalidArgumentError("smaps: KernelPageSize before any mapping");
    line = absl::StripAsciiWhitespace(line);
    uint64_t kib = 0;
    if (!absl::ConsumeSuffix(&line, " kB") || !absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &kib) ||
        kib == 0) {
      return absl::InvalidArgumentError(absl::StrCat("smaps: bad KernelPageSize line '", line, "'"));
    }
    for (size_t i = 0; i < addresses.size(); ++i) {
      const uint64_t at = reinterpret_cast<uint64_t>(addresses[i]);
      if (at >= range->first && at < range->second) pages[i] = kib << 10;
    }
  }
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (pages[i] == 0) {
      return absl::NotFoundError(absl::StrCat("address 0x", absl::Hex(reinterpret_cast<uint64_t>(addresses[i])),
                                              " is in no mapping"));
    }
  }
  return pages;
}

absl::StatusOr<std::vector<uint64_t>> KernelPageBytes(std::span<const void* const> addresses) {
  std::ifstream file("/proc/self/smaps");
  if (!file) return absl::UnavailableError("cannot read /proc/self/smaps");
  std::stringstream text;
  text << file.rdbuf();
  return KernelPageBytesIn(text.str(), addresses);
}

}  // namespace fathom::memory
