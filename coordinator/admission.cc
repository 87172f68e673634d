#include "coordinator/admission.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/placement.h"
#include "coordinator/remap.h"
#include "platform/memory/global_address.h"

namespace fathom::coordinator {
namespace {

bool HoldsReplicas(const Configuration& config, uint32_t node) {
  for (const RegionPlacement& r : config.regions()) {
    if (r.primary() == node) return true;
    for (uint32_t b : r.backups()) {
      if (b == node) return true;
    }
  }
  return false;
}

// Gives every member region that never had all its backups what the members can give it, in region id
// order (so the same configuration always places alike). Nothing was committed to such a region (a commit
// needs f+1 replicas), so an empty backup is a complete one. A replicated region that lost a replica is
// data recovery's: its new replica needs a copy first.
void FillMissingBackups(Configuration* config) {
  Canonicalize(config);
  const int f = static_cast<int>(config->backups_per_region());
  for (RegionPlacement& r : *config->mutable_regions()) {
    if (memory::OwnerOfRegion(r.region_id()) == 0 || r.replicated()) continue;
    if (r.backups_size() < f) {
      std::vector<uint32_t> holders = {r.primary()};
      holders.insert(holders.end(), r.backups().begin(), r.backups().end());
      for (uint32_t b : ChooseBackups(MemberLoads(*config), holders, f - r.backups_size())) r.add_backups(b);
    }
    if (r.backups_size() >= f) r.set_replicated(true);
  }
}

}  // namespace

absl::Status AdmitMember(Configuration* config, const MemberInfo& registered) {
  if (absl::Status s = ValidateMember(registered); !s.ok()) return s;
  MemberInfo member = registered;
  member.set_joined_epoch(config->epoch() + 1);  // the change that admits it
  const uint32_t id = member.node_id();
  if (FindMember(*config, id) != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("node ", id, " is already a member"));
  }
  if (member.client_only()) {
    if (HoldsReplicas(*config, id)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "node ", id, " holds region replicas; it cannot come back as a client-only member (use another id)"));
    }
    *config->add_members() = member;
    return absl::OkStatus();
  }
  const bool first = DataMemberIds(*config).empty() && config->regions().empty();
  if (first) {
    config->set_backups_per_region(member.backups_per_region());
  } else if (member.backups_per_region() != config->backups_per_region()) {
    return absl::FailedPreconditionError(absl::StrCat("node ", id, " runs with ", member.backups_per_region(),
                                                      " backups per region; the cluster keeps ",
                                                      config->backups_per_region()));
  }
  // Back without its memory: what the configuration still lists on it is on the other replicas only.
  if (member.starts_empty()) DropReplicasOf(config, id);
  *config->add_members() = member;
  const auto& lost = config->lost_regions();
  for (const MemberRegion& region : member.regions()) {
    if (FindRegion(*config, region.region_id()) != nullptr) continue;  // placed when it first joined
    // Back empty: its data is gone for good (a restart from logs may place it again: their states).
    if (member.starts_empty() && std::find(lost.begin(), lost.end(), region.region_id()) != lost.end()) continue;
    RegionPlacement* r = config->add_regions();
    r->set_region_id(region.region_id());
    r->set_size_bytes(region.size_bytes());
    r->set_primary(id);
  }
  FillMissingBackups(config);
  return absl::OkStatus();
}

}  // namespace fathom::coordinator
