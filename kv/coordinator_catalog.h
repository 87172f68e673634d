// CoordinatorCatalog: kv table names kept in the cluster configuration (coordinator/), so any node of a
// cluster — embedded or fathomd processes on ZooKeeper — opens a table by name. A table is a
// TableDescriptor whose root fields hold the root object's reference; adding and removing one is a
// compare-and-set configuration change, so two nodes creating one name cannot both win.
//
//   kv::CoordinatorCatalog catalog(coordinator);   // this node's Coordinator
//   ASSIGN_OR_RETURN(kv::Table t, kv::Table::Create(txns, catalog, "users"));
//   // on another node, with its own coordinator:
//   ASSIGN_OR_RETURN(kv::Table same, kv::Table::Open(other_txns, other_catalog, "users"));
#ifndef FATHOM_KV_COORDINATOR_CATALOG_H_
#define FATHOM_KV_COORDINATOR_CATALOG_H_

#include <string_view>
#include <vector>

#include "coordinator/coordinator.h"
#include "kv/catalog.h"

namespace fathom::kv {

class CoordinatorCatalog final : public Catalog {
 public:
  // `coordinator` must outlive the catalog.
  explicit CoordinatorCatalog(coordinator::Coordinator* coordinator) : coordinator_(coordinator) {}

  absl::Status Add(const TableInfo& table) override;
  absl::StatusOr<TableInfo> Find(std::string_view name) override;
  absl::Status Remove(std::string_view name) override;
  // One compare-and-set configuration change (epoch + 1), written to ZooKeeper in real deployments.
  absl::Status Replace(const TableInfo& expected, const TableInfo& replacement) override;
  absl::StatusOr<std::vector<TableInfo>> List() override;

 private:
  coordinator::Coordinator* coordinator_;
};

}  // namespace fathom::kv

#endif  // FATHOM_KV_COORDINATOR_CATALOG_H_
