#include "coordinator/placement.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace fathom::coordinator {

std::vector<MemberLoad> MemberLoads(const Configuration& config) {
  std::vector<MemberLoad> loads;
  absl::flat_hash_map<uint32_t, size_t> index;
  for (const MemberInfo& m : config.members()) {
    if (m.client_only()) continue;  // holds no data: never a candidate
    index[m.node_id()] = loads.size();
    loads.push_back({m.node_id(), m.memory_bytes(), 0, 0});
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

}  // namespace fathom::coordinator
