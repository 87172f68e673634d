#include "coordinator/remap.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/placement.h"

namespace fathom::coordinator {
namespace {

void Erase(google::protobuf::RepeatedField<uint32_t>* list, uint32_t node) {
  list->erase(std::remove(list->begin(), list->end(), node), list->end());
}

}  // namespace

bool DropReplicasOf(Configuration* config, uint32_t node_id) {
  const std::vector<uint32_t> data_members = DataMemberIds(*config);
  auto is_member = [&](uint32_t id) { return std::binary_search(data_members.begin(), data_members.end(), id); };
  bool changed = false;
  auto* regions = config->mutable_regions();
  for (int i = 0; i < regions->size();) {
    RegionPlacement& r = *regions->Mutable(i);
    const bool primary_left = r.primary() == node_id;
    const bool backup_left = std::find(r.backups().begin(), r.backups().end(), node_id) != r.backups().end();
    if (!primary_left && !backup_left) {
      ++i;
      continue;
    }
    changed = true;
    // A region that had all its backups may hold committed data: a replica added later needs a copy.
    if (r.backups_size() >= static_cast<int>(config->backups_per_region())) r.set_replicated(true);
    Erase(r.mutable_backups(), node_id);
    Erase(r.mutable_filling(), node_id);
    if (primary_left) {
      // The first backup still a member and done filling becomes primary: it holds every committed
      // write (docs/recovery.md). One still filling has only part of the data.
      auto promoted = std::find_if(r.backups().begin(), r.backups().end(), [&](uint32_t b) {
        return is_member(b) && std::find(r.filling().begin(), r.filling().end(), b) == r.filling().end();
      });
      if (promoted == r.backups().end()) {
        config->add_lost_regions(r.region_id());
        regions->DeleteSubrange(i, 1);
        continue;
      }
      r.set_primary(*promoted);
      Erase(r.mutable_backups(), r.primary());
    }
    ++i;
  }
  if (changed) AddFillingBackups(config);
  return changed;
}

void AddFillingBackups(Configuration* config) {
  const int f = static_cast<int>(config->backups_per_region());
  for (RegionPlacement& r : *config->mutable_regions()) {
    if (!r.replicated() || r.backups_size() >= f) continue;
    std::vector<uint32_t> holders = {r.primary()};
    holders.insert(holders.end(), r.backups().begin(), r.backups().end());
    for (uint32_t b : ChooseBackups(MemberLoads(*config), holders, f - r.backups_size())) {
      r.add_backups(b);
      r.add_filling(b);
    }
  }
}

bool FinishFilling(Configuration* config, uint32_t region_id, uint32_t primary, uint32_t backup) {
  for (RegionPlacement& r : *config->mutable_regions()) {
    if (r.region_id() != region_id || r.primary() != primary) continue;
    const auto before = r.filling_size();
    Erase(r.mutable_filling(), backup);
    return r.filling_size() != before;
  }
  return false;
}

std::function<absl::Status(Configuration&)> FinishFillingUpdate(
    uint32_t primary, std::vector<std::pair<uint32_t, uint32_t>> filled) {
  return [primary, filled = std::move(filled)](Configuration& config) {
    bool changed = false;
    for (const auto& [region, backup] : filled) changed |= FinishFilling(&config, region, primary, backup);
    if (!changed) {
      return absl::AlreadyExistsError(
          absl::StrCat("none of the ", filled.size(), " copies is of a region node ", primary,
                       " is primary of, to a backup still filling it"));
    }
    return absl::OkStatus();
  };
}

}  // namespace fathom::coordinator
