#include "kv/coordinator_catalog.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fathom::kv {
namespace {

coordinator::TableKind KindOf(IndexKind kind) {
  return kind == IndexKind::kCuckoo ? coordinator::TABLE_KIND_CUCKOO : coordinator::TABLE_KIND_HOPSCOTCH;
}

absl::StatusOr<TableInfo> InfoOf(const coordinator::TableDescriptor& t) {
  TableInfo info;
  info.name = t.name();
  switch (t.kind()) {
    case coordinator::TABLE_KIND_HOPSCOTCH: info.kind = IndexKind::kHopscotch; break;
    case coordinator::TABLE_KIND_CUCKOO: info.kind = IndexKind::kCuckoo; break;
    default:
      return absl::DataLossError(absl::StrCat("kv table \"", t.name(), "\" has an unknown index kind ", t.kind()));
  }
  info.epoch = t.epoch();
  if (t.root_offset() > UINT32_MAX) {
    return absl::DataLossError(absl::StrCat("kv table \"", t.name(), "\" has its root at offset ", t.root_offset()));
  }
  info.root.address = memory::GlobalAddress{t.root_region(), static_cast<uint32_t>(t.root_offset())};
  info.root.incarnation = t.root_incarnation();
  info.root.capacity = t.root_capacity();
  return info;
}

void SetDescriptor(const TableInfo& table, coordinator::TableDescriptor* t) {
  t->set_name(table.name);
  t->set_kind(KindOf(table.kind));
  t->set_epoch(table.epoch);
  t->set_root_region(table.root.address.region);
  t->set_root_offset(table.root.address.offset);
  t->set_root_incarnation(table.root.incarnation);
  t->set_root_capacity(table.root.capacity);
}

absl::Status NoTable(std::string_view name) {
  return absl::NotFoundError(absl::StrCat("no kv table named \"", std::string(name), "\""));
}

}  // namespace

absl::Status CoordinatorCatalog::Add(const TableInfo& table) {
  return coordinator_
      ->Update([&table](coordinator::Configuration& config) -> absl::Status {
        for (const auto& t : config.tables()) {
          if (t.name() == table.name) {
            return absl::AlreadyExistsError(absl::StrCat("kv table \"", table.name, "\" already exists"));
          }
        }
        SetDescriptor(table, config.add_tables());
        return absl::OkStatus();
      })
      .status();
}

absl::StatusOr<TableInfo> CoordinatorCatalog::Find(std::string_view name) {
  auto config = coordinator_->GetConfiguration();
  if (!config.ok()) return config.status();
  for (const auto& t : config->tables()) {
    if (t.name() == name) return InfoOf(t);
  }
  return NoTable(name);
}

absl::Status CoordinatorCatalog::Remove(std::string_view name) {
  return coordinator_
      ->Update([name](coordinator::Configuration& config) -> absl::Status {
        auto* tables = config.mutable_tables();
        for (int i = 0; i < tables->size(); ++i) {
          if (tables->Get(i).name() == name) {
            tables->DeleteSubrange(i, 1);
            return absl::OkStatus();
          }
        }
        return NoTable(name);
      })
      .status();
}

absl::Status CoordinatorCatalog::Replace(const TableInfo& expected, const TableInfo& replacement) {
  return coordinator_
      ->Update([&](coordinator::Configuration& config) -> absl::Status {
        for (auto& t : *config.mutable_tables()) {
          if (t.name() != replacement.name) continue;
          auto current = InfoOf(t);
          if (!current.ok()) return current.status();
          if (!current->SameGeneration(expected)) return CatalogChanged(replacement.name);
          SetDescriptor(replacement, &t);
          return absl::OkStatus();
        }
        return NoTable(replacement.name);
      })
      .status();
}

absl::StatusOr<std::vector<TableInfo>> CoordinatorCatalog::List() {
  auto config = coordinator_->GetConfiguration();
  if (!config.ok()) return config.status();
  std::vector<TableInfo> tables;
  for (const auto& t : config->tables()) {
    auto info = InfoOf(t);
    if (!info.ok()) return info.status();
    tables.push_back(*info);
  }
  std::sort(tables.begin(), tables.end(), [](const TableInfo& a, const TableInfo& b) { return a.name < b.name; });
  return tables;
}

}  // namespace fathom::kv
