// TableAdmin: a member's answer to the control service's table calls, with the kv API (kv/kv.h) on this
// node's transaction layer and the cluster's catalog (a CoordinatorCatalog in fathomd). So
// `fathomctl table create` reaches any member, and the table it makes is the one every node (and a
// client-only member such as the YCSB driver) opens by name.
//
//   auto tables = std::make_shared<TableAdmin>(txns.get(), &catalog);
//   node->SetTableCalls(tables);          // before serving; SetTableCalls(nullptr) before txns go
#ifndef FATHOM_SERVER_TABLE_ADMIN_H_
#define FATHOM_SERVER_TABLE_ADMIN_H_

#include "kv/catalog.h"
#include "kv/kv.h"
#include "platform/node/control/table_calls.h"
#include "txn/txn.h"

namespace fathom::server {

// What a table's root says, as the control service reports it.
control::TableSummary SummaryOf(const kv::Table& table, uint64_t epoch);

class TableAdmin final : public control::TableCalls {
 public:
  // Both must outlive the admin; thread-safe as they are.
  TableAdmin(txn::TransactionService* txns, kv::Catalog* catalog) : txns_(txns), catalog_(catalog) {}

  absl::StatusOr<control::CreateTableResponse> Create(const control::CreateTableRequest& request) override;
  absl::StatusOr<control::DropTableResponse> Drop(const control::DropTableRequest& request) override;
  absl::StatusOr<control::ListTablesResponse> List() override;
  absl::StatusOr<control::ResizeTableResponse> Resize(const control::ResizeTableRequest& request) override;

 private:
  txn::TransactionService* const txns_;
  kv::Catalog* const catalog_;
};

}  // namespace fathom::server

#endif  // FATHOM_SERVER_TABLE_ADMIN_H_
