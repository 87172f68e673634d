#include "kv/catalog.h"

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"

namespace fathom::kv {

absl::Status InProcessCatalog::Add(const TableInfo& table) {
  MutexLock lock(&mu_);
  if (!tables_.emplace(table.name, table).second) {
    return absl::AlreadyExistsError(absl::StrCat("kv table \"", table.name, "\" already exists"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TableInfo> InProcessCatalog::Find(std::string_view name) {
  MutexLock lock(&mu_);
  auto it = tables_.find(name);
  if (it == tables_.end()) return absl::NotFoundError(absl::StrCat("no kv table named \"", std::string(name), "\""));
  return it->second;
}

absl::Status InProcessCatalog::Remove(std::string_view name) {
  MutexLock lock(&mu_);
  auto it = tables_.find(name);
  if (it == tables_.end()) return absl::NotFoundError(absl::StrCat("no kv table named \"", std::string(name), "\""));
  tables_.erase(it);
  return absl::OkStatus();
}

absl::Status CatalogChanged(std::string_view name) {
  return absl::FailedPreconditionError(
      absl::StrCat("kv table \"", std::string(name), "\" changed in the catalog (another resize or a drop)"));
}

absl::Status InProcessCatalog::Replace(const TableInfo& expected, const TableInfo& replacement) {
  MutexLock lock(&mu_);
  auto it = tables_.find(replacement.name);
  if (it == tables_.end()) {
    return absl::NotFoundError(absl::StrCat("no kv table named \"", replacement.name, "\""));
  }
  if (!it->second.SameGeneration(expected)) return CatalogChanged(replacement.name);
  it->second = replacement;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TableInfo>> InProcessCatalog::List() {
  MutexLock lock(&mu_);
  std::vector<TableInfo> out;
  for (const auto& [name, info] : tables_) out.push_back(info);
  return out;
}

}  // namespace fathom::kv
