#include "logging/node_restart.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "logging/log_exchange.h"

namespace fathom::logging {

std::function<absl::Status(txn::BackupStore&)> NodeRestore::BackupRestorer() {
  return [this](txn::BackupStore& store) -> absl::Status {
    auto restored = RestoreBackups(store, image, backup_regions, [this](uint32_t region) {
      auto it = region_bytes.find(region);
      return it == region_bytes.end() ? uint64_t{0} : it->second;
    });
    if (!restored.ok()) return restored.status();
    backups = *restored;
    return absl::OkStatus();
  };
}

absl::StatusOr<NodeRestore> RestoreNode(node::Node& node, const LogContents& own, const memory::RegionMap& replicas,
                                        absl::Duration call_timeout) {
  const uint32_t self = node.id();
  const std::vector<uint32_t>& members = replicas.members();
  std::vector<LogContents> logs = {own};
  for (uint32_t peer : members) {
    if (peer == self) continue;
    auto fetched = FetchLogSnapshot(node, peer, call_timeout);
    if (!fetched.ok()) return fetched.status();
    if (!fetched->has_log) {
      return absl::FailedPreconditionError(absl::StrCat(
          "node ", peer, " has no log, but node ", self, " restarts from its log in ", own.dir,
          ": a whole-cluster restart needs every member's log (start every member with its data directory, "
          "or remove them all for a fresh cluster)"));
    }
    logs.push_back(std::move(fetched->contents));
  }
  // The same order on every node, so ties (equal versions, which are equal states) resolve alike.
  std::sort(logs.begin(), logs.end(),
            [](const LogContents& a, const LogContents& b) { return a.node_id < b.node_id; });
  NodeRestore restore;
  restore.image = MergeLogs(logs);
  restore.epoch = restore.image.max_epoch + 1;

  std::set<uint32_t> own_regions;
  for (memory::LocalRegion* region : node.data_regions()) own_regions.insert(region->id());
  for (const auto& [raw, state] : restore.image.newest) {
    const uint32_t region = state.address.region;
    auto placed = replicas.PrimaryOf(region);
    if (!placed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("a logged state of ", state.address.ToString(),
                                                     " is in no placement: ", placed.status().message()));
    }
    const uint32_t primary = *placed;
    if (!replicas.IsMember(primary)) {
      return absl::InvalidArgumentError(absl::StrCat("a logged state of ", state.address.ToString(),
                                                     " belongs to node ", primary, ", which is not a member"));
    }
    if (primary == self) {
      // Not silently dropped: a node restarted with less memory than its log covers must say so.
      if (!own_regions.contains(region)) {
        return absl::InvalidArgumentError(absl::StrCat("node ", self, " has no region ", region, " for its logged ",
                                                       state.address.ToString(), " (started with less memory?)"));
      }
      continue;
    }
    // As listed, members or not: a backup that has left since does not change what this node held.
    auto holders = replicas.ReplicasOf(region);
    if (!holders.ok()) return holders.status();
    if (std::find(holders->backups.begin(), holders->backups.end(), self) != holders->backups.end()) {
      restore.backup_regions.insert(region);
    }
  }
  // Backup copies are laid out as their primary's region: its size comes from the join.
  absl::Status sized = node.RunOnThread(0, [&](node::NodeThread& thread) -> absl::Status {
    for (uint32_t region : restore.backup_regions) {
      // Unavailable, so a restart asks again: the primary restarts too, and its connection may be being
      // made again (a new incarnation replaces the old one's).
      const absl::Status unknown = absl::UnavailableError(
          absl::StrCat("node ", self, " backs up region ", region, " but its primary has not published it yet"));
      auto route = thread.RouteTo(region);
      if (!route.ok()) return unknown;
      restore.region_bytes[region] = route->region->length;
    }
    return absl::OkStatus();
  });
  if (!sized.ok()) return sized;

  auto primaries = RestorePrimaries(node, restore.image);
  if (!primaries.ok()) return primaries.status();
  restore.primaries = *primaries;

  std::map<uint64_t, uint64_t> own_versions;
  for (const ObjectState& state : NewestStates(own, restore.image.log_epoch)) {
    own_versions[state.address.raw()] = state.version;
  }
  for (const auto& [raw, state] : restore.image.newest) {
    const bool primary = *replicas.PrimaryOf(state.address.region) == self;  // checked above
    if (!primary && !restore.backup_regions.contains(state.address.region)) continue;
    auto it = own_versions.find(raw);
    if (it != own_versions.end() && it->second >= state.version) continue;
    ObjectState adopted = state;
    adopted.role = primary ? Role::kPrimary : Role::kBackup;
    adopted.position = 0;  // the log assigns its own
    restore.adopted.push_back(std::move(adopted));
  }
  return restore;
}

}  // namespace fathom::logging
