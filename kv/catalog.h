// Catalog: where a table's name leads to its root object, so any node can open a table by name.
//
// Two implementations: CoordinatorCatalog (coordinator_catalog.h), the names in the cluster configuration,
// for any cluster with a coordinator; and InProcessCatalog, shared by the nodes of an uncoordinated
// embedded cluster (one process).
#ifndef FATHOM_KV_CATALOG_H_
#define FATHOM_KV_CATALOG_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kv/format.h"
#include "platform/object/object_layout.h"

namespace fathom::kv {

struct TableInfo {
  std::string name;
  IndexKind kind = IndexKind::kHopscotch;
  uint64_t epoch = 1;  // bumped by each resize (the root's epoch)
  object::ObjectRef root;

  // The same table generation: what Replace compares.
  bool SameGeneration(const TableInfo& other) const {
    return name == other.name && epoch == other.epoch && root == other.root;
  }
};

// Replace's answer when the catalog no longer holds the expected descriptor.
absl::Status CatalogChanged(std::string_view name);

// Thread-safe.
class Catalog {
 public:
  virtual ~Catalog() = default;
  // AlreadyExists if a table has the name.
  virtual absl::Status Add(const TableInfo& table) = 0;
  // NotFound for an unknown name.
  virtual absl::StatusOr<TableInfo> Find(std::string_view name) = 0;
  virtual absl::Status Remove(std::string_view name) = 0;
  // Publishes a resized table: swaps the descriptor of `replacement.name` for `replacement` only if the
  // catalog still holds `expected` (same epoch and root), so two resizes cannot both publish. NotFound for
  // an unknown name; FailedPrecondition if the descriptor is not `expected` any more.
  virtual absl::Status Replace(const TableInfo& expected, const TableInfo& replacement) = 0;
  // Sorted by name.
  virtual absl::StatusOr<std::vector<TableInfo>> List() = 0;
};

class InProcessCatalog final : public Catalog {
 public:
  absl::Status Add(const TableInfo& table) override;
  absl::StatusOr<TableInfo> Find(std::string_view name) override;
  absl::Status Remove(std::string_view name) override;
  absl::Status Replace(const TableInfo& expected, const TableInfo& replacement) override;
  absl::StatusOr<std::vector<TableInfo>> List() override;

 private:
  absl::Mutex mu_;
  std::map<std::string, TableInfo, std::less<>> tables_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fathom::kv

#endif  // FATHOM_KV_CATALOG_H_
