#include "coordinator/placement.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace fathom::coordinator {

std::vector<MemberLoad> MemberLoads(const Configuration& config) {
  std::vector<MemberLoad> loads;
  absl::flat_hash_map<uint32_t, size_t> index;
  for (const MemberInfo& m : config.members()) {
    if (m.client_only()) continue;  // holds no data: never a candidate
    index[m.node_id()] = loads.size();
    loads.push_back({m.node_id(), m.memory_bytes(), 0, 0,
                     m.failure_domain().empty() ? absl::StrCat("node ", m.node_id()) : m.failure_domain()});
  }
  auto charge = [&](uint32_t node, uint64_t size) {
    auto it = index.find(node);
    if (it == index.end()) return;
    loads[it->second].used_bytes += size;
    loads[it->second].replicas += 1;
  };
  for (const RegionPlacement& r : config.regions()) {
    charge(r.primary(), r.size_bytes());
    for (uint32_t b : r.backups()) charge(b, r.size_bytes());
  }
  return loads;
}

absl::StatusOr<std::vector<uint32_t>> PlaceRegion(const std::vector<MemberLoad>& loads, uint64_t size_bytes,
                                                  int replicas) {
  if (size_bytes == 0) return absl::InvalidArgumentError("region size 0");
  if (replicas < 1) return absl::InvalidArgumentError(absl::StrCat("replica count ", replicas, " < 1"));
  if (static_cast<size_t>(replicas) > loads.size()) {
    return absl::FailedPreconditionError(
        absl::StrCat(replicas, " replicas need ", replicas, " distinct members; the cluster has ", loads.size()));
  }
  std::vector<MemberLoad> fit;
  for (const MemberLoad& l : loads) {
    if (l.capacity_bytes == 0 || (l.used_bytes <= l.capacity_bytes && l.capacity_bytes - l.used_bytes >= size_bytes)) {
      fit.push_back(l);
    }
  }
  if (static_cast<size_t>(replicas) > fit.size()) {
    return absl::ResourceExhaustedError(absl::StrCat("only ", fit.size(), " of ", loads.size(),
                                                     " members have room for a region of ", size_bytes,
                                                     " bytes; ", replicas, " replicas needed"));
  }
  std::sort(fit.begin(), fit.end(), [](const MemberLoad& a, const MemberLoad& b) {
    if (a.used_bytes != b.used_bytes) return a.used_bytes < b.used_bytes;
    if (a.replicas != b.replicas) return a.replicas < b.replicas;
    return a.node_id < b.node_id;
  });
  std::vector<uint32_t> chosen;
  for (int i = 0; i < replicas; ++i) chosen.push_back(fit[i].node_id);
  return chosen;
}

std::vector<uint32_t> ChooseBackups(const std::vector<MemberLoad>& loads, const std::vector<uint32_t>& holders,
                                    int count) {
  absl::flat_hash_set<uint32_t> taken(holders.begin(), holders.end());
  absl::flat_hash_set<std::string> domains;
  for (const MemberLoad& l : loads) {
    if (taken.contains(l.node_id)) domains.insert(l.failure_domain);
  }
  std::vector<MemberLoad> candidates;
  for (const MemberLoad& l : loads) {
    if (!taken.contains(l.node_id)) candidates.push_back(l);
  }
  std::vector<uint32_t> chosen;
  while (static_cast<int>(chosen.size()) < count && !candidates.empty()) {
    auto better = [&](const MemberLoad& a, const MemberLoad& b) {
      const bool a_new = !domains.contains(a.failure_domain);
      const bool b_new = !domains.contains(b.failure_domain);
      if (a_new != b_new) return a_new;
      if (a.used_bytes != b.used_bytes) return a.used_bytes < b.used_bytes;
      if (a.replicas != b.replicas) return a.replicas < b.replicas;
      return a.node_id < b.node_id;
    };
    auto best = std::min_element(candidates.begin(), candidates.end(), better);
    chosen.push_back(best->node_id);
    domains.insert(best->failure_domain);
    candidates.erase(best);
  }
  return chosen;
}

memory::RegionMap RegionMapOf(const Configuration& config) {
  absl::flat_hash_map<uint32_t, memory::RegionReplicas> regions;
  for (const RegionPlacement& r : config.regions()) {
    regions[r.region_id()] = {r.primary(), {r.backups().begin(), r.backups().end()}, r.size_bytes(),
                              {r.filling().begin(), r.filling().end()}};
  }
  memory::RegionMap map = memory::RegionMap::Placed(config.epoch(), DataMemberIds(config),
                                                    static_cast<int>(config.backups_per_region()), std::move(regions));
  absl::flat_hash_map<uint32_t, uint64_t> joined;
  for (const MemberInfo& m : config.members()) joined[m.node_id()] = m.joined_epoch();
  map.SetCoordinators(std::move(joined), config.manager_id());
  return map;
}

}  // namespace fathom::coordinator
