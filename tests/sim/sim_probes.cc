#include "tests/sim/sim_probes.h"

#include "absl/strings/str_cat.h"
#include "platform/memory/global_address.h"

namespace fathom::sim {

absl::StatusOr<uint32_t> BackupOfOwnRegion(const coordinator::Configuration& configuration, uint32_t owner) {
  for (const coordinator::RegionPlacement& r : configuration.regions()) {
    if (memory::OwnerOfRegion(r.region_id()) != owner) continue;
    if (r.primary() == owner && r.backups_size() == 1 && r.backups(0) != owner) return r.backups(0);
    break;
  }
  return absl::FailedPreconditionError(absl::StrCat("node ", owner, "'s region has no single backup elsewhere"));
}

std::string BackupCopyOf(SimCluster& cluster, uint32_t node, const object::ObjectRef& ref) {
  auto copy = cluster.txns(node).backups().View(ref.address.region);
  if (copy.size() < uint64_t{ref.address.offset} + ref.capacity) return "";
  return std::string(reinterpret_cast<const char*>(copy.data()) + ref.address.offset, ref.capacity);
}

absl::StatusOr<object::ObjectRef> CommitNewObject(SimCluster& cluster, uint32_t coordinator, uint32_t on_node,
                                                  std::string_view value) {
  txn::Transaction tx = cluster.txns(coordinator).Begin(0);
  absl::StatusOr<object::ObjectRef> ref = tx.Alloc(16, txn::AllocHint{.node = on_node});
  if (!ref.ok()) return ref.status();
  if (absl::Status s = tx.Write(*ref, value); !s.ok()) return s;
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return ref;
}

uint64_t SumOverThreads(SimCluster& cluster, uint32_t node, const std::function<uint64_t(txn::TxnThread&)>& of) {
  uint64_t total = 0;
  for (int t = 0; t < cluster.node(node).threads(); ++t) {
    auto thread = cluster.txns(node).Thread(t);
    if (thread.ok()) total += of(**thread);
  }
  return total;
}

}  // namespace fathom::sim
