#include "platform/node/control/table_name.h"

#include "absl/strings/str_cat.h"

namespace fathom::control {

absl::Status ValidateTableName(std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("table name: empty");
  if (name.size() > kMaxTableNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("table name: ", name.size(), " bytes, at most ", kMaxTableNameBytes));
  }
  if (name[0] == '.') return absl::InvalidArgumentError("table name: must not start with '.'");
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("table name: byte ", i, " (0x", absl::Hex(static_cast<uint8_t>(c)),
                                                     ") is not one of A-Z a-z 0-9 _ - ."));
    }
  }
  return absl::OkStatus();
}

}  // namespace fathom::control
