#include "txn/recovery_decision.h"

#include <algorithm>
#include <set>

namespace fathom::txn {
namespace {

bool Holds(const std::vector<Holder>& holders, uint32_t node, HoldKind kind, uint32_t region) {
  return std::any_of(holders.begin(), holders.end(), [&](const Holder& h) {
    return h.node == node && h.kind == kind &&
           std::find(h.regions.begin(), h.regions.end(), region) != h.regions.end();
  });
}

bool Any(const std::vector<Holder>& holders, HoldKind kind) {
  return std::any_of(holders.begin(), holders.end(), [kind](const Holder& h) { return h.kind == kind; });
}

// Every written region's current primary can install it and every backup (not still filling) holds it.
bool Complete(const std::vector<Holder>& holders, const std::set<uint32_t>& written, const memory::RegionMap& map) {
  for (uint32_t region : written) {
    absl::StatusOr<memory::RegionReplicas> replicas = map.ReplicasOf(region);
    if (!replicas.ok()) return false;
    // Its locks, or, if it was a backup when the transaction ran (promoted since), its record.
    if (!Holds(holders, replicas->primary, HoldKind::kLocked, region) &&
        !Holds(holders, replicas->primary, HoldKind::kRecord, region)) {
      return false;
    }
    for (uint32_t backup : replicas->backups) {
      const bool filling =
          std::find(replicas->filling.begin(), replicas->filling.end(), backup) != replicas->filling.end();
      if (!filling && !Holds(holders, backup, HoldKind::kRecord, region)) return false;
    }
  }
  return true;
}

// Every written region's current primary holds the record: a backup promoted in place of a primary that
// died with the coordinator (a live primary that installed it holds it committed, one that aborted it
// nothing).
bool HeldByEveryPrimary(const std::vector<Holder>& holders, const std::set<uint32_t>& written,
                        const memory::RegionMap& map) {
  for (uint32_t region : written) {
    absl::StatusOr<memory::RegionReplicas> replicas = map.ReplicasOf(region);
    if (!replicas.ok() || !Holds(holders, replicas->primary, HoldKind::kRecord, region)) return false;
  }
  return true;
}

}  // namespace

Verdict DecideOrphan(const std::vector<Holder>& holders, const memory::RegionMap& map) {
  if (Any(holders, HoldKind::kAborted)) return Verdict::kAbort;
  if (Any(holders, HoldKind::kCommitted) || Any(holders, HoldKind::kTruncated)) return Verdict::kCommit;
  if (!Any(holders, HoldKind::kRecord)) return Verdict::kAbort;
  // Every region it writes, from any record (a region whose replicas hold nothing of it counts too).
  std::set<uint32_t> written;
  for (const Holder& h : holders) {
    written.insert(h.regions.begin(), h.regions.end());
    written.insert(h.written.begin(), h.written.end());
  }
  if (Any(holders, HoldKind::kLocked)) return Complete(holders, written, map) ? Verdict::kCommit : Verdict::kAbort;
  return HeldByEveryPrimary(holders, written, map) ? Verdict::kCommit : Verdict::kAbort;
}

}  // namespace fathom::txn
