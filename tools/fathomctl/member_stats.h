// Asks every member of a configuration for its Stats through its control address (ControlClient, with the
// cluster token), all at once, each call bounded by `timeout`. A member that does not answer is reported
// as unreachable with the reason; that is not an error of the whole collection.
//
//   std::vector<MemberStats> stats = CollectMemberStats(config, token, absl::Seconds(3));
//   for (const MemberStats& s : stats) if (!s.status.ok()) ... s.status.message() ...
#ifndef FATHOM_TOOLS_FATHOMCTL_MEMBER_STATS_H_
#define FATHOM_TOOLS_FATHOMCTL_MEMBER_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "coordinator/configuration.h"
#include "platform/node/control/control.pb.h"

namespace fathom::fathomctl {

struct MemberStats {
  uint32_t node_id = 0;
  absl::Status status;            // OK: `stats` holds the member's answer
  control::StatsResponse stats;
};

// One entry per member, in the configuration's member order; with `replica_digests`, each also digests the
// replicas it holds (StatsRequest).
// `tls_ca_path`: the members' control services use TLS, with certificates that CA signed ("": plaintext).
std::vector<MemberStats> CollectMemberStats(const coordinator::Configuration& config, const std::string& token,
                                            const std::string& tls_ca_path, absl::Duration timeout,
                                            bool replica_digests = false);

}  // namespace fathom::fathomctl

#endif  // FATHOM_TOOLS_FATHOMCTL_MEMBER_STATS_H_
