// fathomctl replicas: whether every region's replicas hold the same data. Each member digests the replicas
// it holds (StatsRequest.replica_digests); a region agrees when its primary and every backup that is not
// still filling report one digest.
//
//   ReplicaReport report = CompareReplicas(config, CollectMemberStats(config, token, timeout, true));
//   std::cout << report.text;  // exit 1 unless report.identical
#ifndef FATHOM_TOOLS_FATHOMCTL_REPLICAS_H_
#define FATHOM_TOOLS_FATHOMCTL_REPLICAS_H_

#include <string>
#include <vector>

#include "coordinator/configuration.h"
#include "tools/fathomctl/member_stats.h"

namespace fathom::fathomctl {

struct ReplicaReport {
  bool identical = false;  // every region's replicas reported, and equal
  int regions = 0;         // regions compared
  std::string text;        // one summary line, then a line per region that does not agree
};

ReplicaReport CompareReplicas(const coordinator::Configuration& config, const std::vector<MemberStats>& stats);

}  // namespace fathom::fathomctl

#endif  // FATHOM_TOOLS_FATHOMCTL_REPLICAS_H_
