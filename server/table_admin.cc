#include "server/table_admin.h"

#include "absl/strings/str_cat.h"

namespace fathom::server {
namespace {

control::TableIndexKind WireKind(kv::IndexKind kind) {
  return kind == kv::IndexKind::kCuckoo ? control::TABLE_INDEX_CUCKOO : control::TABLE_INDEX_HOPSCOTCH;
}

}  // namespace

control::TableSummary SummaryOf(const kv::Table& table, uint64_t epoch) {
  control::TableSummary summary;
  summary.set_name(table.name());
  summary.set_kind(WireKind(table.kind()));
  summary.set_buckets(table.buckets());
  summary.set_epoch(epoch);
  summary.set_inline_bytes(table.options().inline_bytes);
  summary.set_max_key_bytes(table.options().max_key_bytes);
  summary.set_max_value_bytes(table.options().max_value_bytes);
  return summary;
}

absl::StatusOr<control::CreateTableResponse> TableAdmin::Create(const control::CreateTableRequest& request) {
  kv::TableOptions options;  // a zero on the wire keeps kv's default
  options.kind = request.kind() == control::TABLE_INDEX_CUCKOO ? kv::IndexKind::kCuckoo : kv::IndexKind::kHopscotch;
  if (request.buckets() != 0) options.buckets = request.buckets();
  if (request.inline_bytes() != 0) options.inline_bytes = request.inline_bytes();
  if (request.max_key_bytes() != 0) options.max_key_bytes = request.max_key_bytes();
  if (request.max_value_bytes() != 0) options.max_value_bytes = request.max_value_bytes();
  auto table = kv::Table::Create(*txns_, *catalog_, request.name(), options);
  if (!table.ok()) return table.status();
  control::CreateTableResponse response;
  *response.mutable_table() = SummaryOf(*table, table->epoch());
  return response;
}

absl::StatusOr<control::DropTableResponse> TableAdmin::Drop(const control::DropTableRequest& request) {
  if (absl::Status dropped = kv::Table::Drop(*txns_, *catalog_, request.name()); !dropped.ok()) return dropped;
  return control::DropTableResponse();
}

absl::StatusOr<control::ResizeTableResponse> TableAdmin::Resize(const control::ResizeTableRequest& request) {
  kv::ResizeOptions options;
  options.buckets = request.buckets();  // 0: twice the current count
  options.from_epoch = request.from_epoch();  // 0: whatever it is now
  if (absl::Status resized = kv::Table::Resize(*txns_, *catalog_, request.name(), options); !resized.ok()) {
    return resized;
  }
  // The table as the catalog names it now (a concurrent resize may have published a later generation).
  auto table = kv::Table::Open(*txns_, *catalog_, request.name());
  if (!table.ok()) return table.status();
  control::ResizeTableResponse response;
  *response.mutable_table() = SummaryOf(*table, table->epoch());
  return response;
}

absl::StatusOr<control::ListTablesResponse> TableAdmin::List() {
  auto tables = catalog_->List();
  if (!tables.ok()) return tables.status();
  control::ListTablesResponse response;
  for (const kv::TableInfo& info : *tables) {
    // The catalog's word, then the root's: a table whose root cannot be read is still listed.
    auto table = kv::Table::Open(*txns_, *catalog_, info.name);
    if (table.ok()) {
      *response.add_tables() = SummaryOf(*table, info.epoch);
      continue;
    }
    control::TableSummary* summary = response.add_tables();
    summary->set_name(info.name);
    summary->set_kind(WireKind(info.kind));
    summary->set_epoch(info.epoch);
    summary->set_problem(table.status().ToString());
  }
  return response;
}

}  // namespace fathom::server
