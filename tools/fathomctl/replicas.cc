// See replicas.h.
#include "tools/fathomctl/replicas.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace fathom::fathomctl {

ReplicaReport CompareReplicas(const coordinator::Configuration& config, const std::vector<MemberStats>& stats) {
  // (node, region, primary) -> what that node reported.
  std::map<std::tuple<uint32_t, uint32_t, bool>, const control::ReplicaDigest*> reported;
  std::map<uint32_t, const MemberStats*> by_node;
  for (const MemberStats& s : stats) {
    by_node[s.node_id] = &s;
    if (!s.status.ok()) continue;
    for (const control::ReplicaDigest& d : s.stats.replicas()) reported[{s.node_id, d.region_id(), d.primary()}] = &d;
  }
  ReplicaReport report;
  std::string problems;
  int differing = 0;
  for (const coordinator::RegionPlacement& r : config.regions()) {
    ++report.regions;
    std::vector<std::pair<uint32_t, bool>> holders = {{r.primary(), true}};
    for (uint32_t b : r.backups()) {
      if (std::find(r.filling().begin(), r.filling().end(), b) == r.filling().end()) holders.push_back({b, false});
    }
    std::string line;
    std::optional<uint64_t> first;
    bool agree = true;
    for (const auto& [node, primary] : holders) {
      auto it = reported.find({node, r.region_id(), primary});
      absl::StrAppend(&line, " ", primary ? "primary " : "backup ", node, "=");
      if (it == reported.end()) {
        auto member = by_node.find(node);
        absl::StrAppend(&line, member == by_node.end()         ? "not a member"
                               : !member->second->status.ok() ? absl::StrCat("unreachable (", member->second->status.message(), ")")
                                                              : "not reported");
        agree = false;
        continue;
      }
      absl::StrAppend(&line, absl::Hex(it->second->digest(), absl::kZeroPad16), " (", it->second->objects(), " objects)");
      if (!first.has_value()) first = it->second->digest();
      if (*first != it->second->digest()) agree = false;
    }
    if (!agree) {
      ++differing;
      absl::StrAppend(&problems, "region ", r.region_id(), ":", line, "\n");
    }
  }
  report.identical = differing == 0;
  report.text = report.identical ? absl::StrCat("replicas: all ", report.regions, " regions have identical replicas\n")
                                 : absl::StrCat("replicas: ", differing, " of ", report.regions,
                                                " regions do not agree\n", problems);
  return report;
}

}  // namespace fathom::fathomctl
