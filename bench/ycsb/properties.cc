#include "bench/ycsb/properties.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace fathom::ycsb {
namespace {

std::string Trim(std::string_view s) {
  return std::string(absl::StripAsciiWhitespace(absl::string_view(s.data(), s.size())));
}

}  // namespace

absl::Status Properties::ParseText(std::string_view text) {
  int line_number = 0;
  for (absl::string_view raw_line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_number;
    const std::string line = Trim(std::string_view(raw_line.data(), raw_line.size()));
    if (line.empty() || line[0] == '#' || line[0] == '!') continue;
    // The key ends at the first '=', ':' or whitespace, as in java.util.Properties.
    const size_t key_end = line.find_first_of("=: \t");
    if (key_end == 0) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": empty key in '", line, "'"));
    }
    std::string key = line.substr(0, key_end);
    std::string value;
    if (key_end != std::string::npos) {
      std::string rest = Trim(std::string_view(line).substr(key_end));
      if (!rest.empty() && (rest[0] == '=' || rest[0] == ':')) rest = Trim(std::string_view(rest).substr(1));
      value = std::move(rest);
    }
    values_[std::move(key)] = std::move(value);
  }
  return absl::OkStatus();
}

absl::Status Properties::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open properties file '", path, "'"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  absl::Status status = ParseText(buffer.str());
  if (!status.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", status.message()));
  return absl::OkStatus();
}

absl::Status Properties::SetFromAssignment(std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected key=value, got '", std::string(assignment), "'"));
  }
  Set(Trim(assignment.substr(0, eq)), Trim(assignment.substr(eq + 1)));
  return absl::OkStatus();
}

std::string Properties::GetString(const std::string& key, const std::string& default_value) const {
  auto it = values_.find(key);
  return it == values_.end() ? default_value : it->second;
}

absl::StatusOr<int64_t> Properties::GetInt(const std::string& key, int64_t default_value) const {
  auto it = values_.find(key);
  if (it == values_.end()) return default_value;
  int64_t value;
  if (!absl::SimpleAtoi(it->second, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("property ", key, "='", it->second, "' is not an integer"));
  }
  return value;
}

absl::StatusOr<double> Properties::GetDouble(const std::string& key, double default_value) const {
  auto it = values_.find(key);
  if (it == values_.end()) return default_value;
  double value;
  if (!absl::SimpleAtod(it->second, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("property ", key, "='", it->second, "' is not a number"));
  }
  return value;
}

absl::StatusOr<bool> Properties::GetBool(const std::string& key, bool default_value) const {
  auto it = values_.find(key);
  if (it == values_.end()) return default_value;
  const std::string lower = absl::AsciiStrToLower(it->second);
  if (lower == "true") return true;
  if (lower == "false") return false;
  return absl::InvalidArgumentError(absl::StrCat("property ", key, "='", it->second, "' is not true/false"));
}

}  // namespace fathom::ycsb
