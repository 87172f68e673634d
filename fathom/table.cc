// See table.h.
#include "fathom/table.h"

#include "fathom/internal.h"

namespace fathom {

absl::StatusOr<std::string> Table::Get(std::string_view key) const { return impl_->table.Get(key); }

absl::Status Table::Put(std::string_view key, std::string_view value) const { return impl_->table.Put(key, value); }

absl::Status Table::Delete(std::string_view key) const { return impl_->table.Delete(key); }

const std::string& Table::name() const { return impl_->table.name(); }

}  // namespace fathom
