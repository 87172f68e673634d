// See transaction.h.
#include "fathom/transaction.h"

#include "absl/strings/str_cat.h"
#include "fathom/internal.h"
#include "platform/base/byte_order.h"

namespace fathom {

absl::StatusOr<std::string> Transaction::Get(const Table& table, std::string_view key) {
  return table.impl().table.Get(impl_->tx, key);
}

absl::Status Transaction::Put(const Table& table, std::string_view key, std::string_view value) {
  return table.impl().table.Put(impl_->tx, key, value);
}

absl::Status Transaction::Delete(const Table& table, std::string_view key) {
  return table.impl().table.Delete(impl_->tx, key);
}

absl::StatusOr<int64_t> Transaction::GetInt(const Table& table, std::string_view key) {
  auto value = Get(table, key);
  if (!value.ok()) return value.status();
  if (value->size() != 8) {
    return absl::InvalidArgumentError(absl::StrCat("the value of '", std::string(key), "' in table ", table.name(), " is ",
                                                   value->size(), " bytes, not an 8-byte integer"));
  }
  return static_cast<int64_t>(LoadU64(value->data()));
}

absl::Status Transaction::PutInt(const Table& table, std::string_view key, int64_t value) {
  std::string bytes;
  AppendU64(bytes, static_cast<uint64_t>(value));
  return Put(table, key, bytes);
}

}  // namespace fathom
