// Promotion: a backup that recovery made a region's primary (coordinator::DropReplicasOf) serves its copy
// of the region as the region itself, once its copy holds every committed write.
//
// The copy has every truncated commit applied. A COMMIT-BACKUP record still pending here belongs to a
// transaction whose coordinator has not decided yet, or decided and has not told this node: it truncates
// (the copy installs the writes) or aborts (the record goes). Until none is left the region is not served,
// so no new transaction can lock an object that a pending commit will still write.
#include "absl/strings/str_cat.h"
#include "txn/shared.h"
#include "txn/txn.h"

namespace fathom::txn {

std::vector<uint32_t> TransactionService::promotions_waiting() const {
  node::Node& node = *shared_->node;
  std::vector<uint32_t> waiting;
  for (uint32_t region : node.region_directory().Current()->PrimaryRegionsOf(node.id())) {
    if (node.ServedRegion(region) == nullptr) waiting.push_back(region);  // neither its own nor promoted yet
  }
  return waiting;
}

absl::StatusOr<std::vector<uint32_t>> TransactionService::ServePromotedRegions() {
  node::Node& node = *shared_->node;
  const std::shared_ptr<const memory::RegionMap> map = node.region_directory().Current();
  std::vector<uint32_t> served;
  for (uint32_t region : promotions_waiting()) {
    absl::StatusOr<memory::RegionReplicas> replicas = map->ReplicasOf(region);
    if (!replicas.ok()) return replicas.status();
    if (replicas->bytes == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("configuration ", map->epoch(), " gives no size for region ", region));
    }
    absl::StatusOr<size_t> pending =
        SumOverThreads([region](TxnThread& t) { return t.participant().BackupRecordsFor(region); });
    if (!pending.ok()) return pending.status();
    if (*pending > 0) continue;  // asked again on the next configuration or retry
    absl::StatusOr<memory::LocalRegion*> copy = shared_->backups.Registered(region, replicas->bytes);
    if (!copy.ok()) return copy.status();
    if (absl::Status s = node.ServeRegion(*copy); !s.ok()) return s;
    served.push_back(region);
  }
  return served;
}

}  // namespace fathom::txn
