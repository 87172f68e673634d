// See table.h.
#include "fathom/table.h"

#include <functional>

#include "fathom/internal.h"
#include "fathom/retry.h"

namespace fathom {
namespace {

uint64_t JitterSeed(std::string_view key) { return std::hash<std::string_view>()(key); }

}  // namespace

absl::StatusOr<std::string> Table::Get(std::string_view key) const {
  return RetryTransient(impl_->retry_deadline, JitterSeed(key), [&] { return impl_->table.Get(key); });
}

// Writing the same value again is harmless, also after an attempt whose commit's outcome was unknown.
absl::Status Table::Put(std::string_view key, std::string_view value) const {
  return RetryTransient(impl_->retry_deadline, JitterSeed(key), [&] { return impl_->table.Put(key, value); });
}

absl::Status Table::Delete(std::string_view key) const {
  // An attempt that may have deleted the key makes a later NotFound this call's own doing.
  bool may_have_deleted = false;
  return RetryTransient(impl_->retry_deadline, JitterSeed(key), [&] {
    absl::Status s = impl_->table.Delete(key);
    if (absl::IsNotFound(s) && may_have_deleted) return absl::OkStatus();
    may_have_deleted |= txn::MayHaveCommitted(s);
    return s;
  });
}

const std::string& Table::name() const { return impl_->table.name(); }

}  // namespace fathom
