// What fathomctl prints: the cluster's configuration and its members' live Stats, as aligned text for
// people or as one line of JSON for scripts. Pure functions of their inputs (unit-tested in report_test).
//
//   StatusView view{"prod", "10.0.0.9:2181", config, CollectMemberStats(config, token, timeout)};
//   std::cout << FormatStatusText(view);      // or FormatStatusJson(view)
//   std::cout << FormatRegionsText(config);   // or FormatRegionsJson(config)
//
// JSON shapes (numbers are JSON numbers except incarnations, which are decimal strings: they are 64-bit
// and would lose digits as doubles in jq or JavaScript):
//   status:  {"cluster","zookeeper","epoch","manager","members":[{"node_id","control_address","fabric",
//             "memory_bytes","incarnation","manager","client_only","stats":{"reachable":true,"peers","coordinator_connected",
//             "applied_epoch","uptime_seconds","log":{"lag_records","lag_micros","enqueued_position",
//             "persisted_position","write_errors","failing"} | null (no --data_dir),"incarnation",
//             "counters":{...}} | {"reachable":false,"error"}}],
//             "leases":[{"node_id","age_ms","expires_in_ms","renewals"}] (as the manager reports them),
//             "regions":[...],"lost_regions":[...],"tables":[...]}
//   regions: {"epoch","regions":[{"region_id","size_bytes","primary","backups":[...]}],"lost_regions":[...]}
#ifndef FATHOM_TOOLS_FATHOMCTL_REPORT_H_
#define FATHOM_TOOLS_FATHOMCTL_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/configuration.h"
#include "tools/fathomctl/member_stats.h"

namespace fathom::fathomctl {

struct StatusView {
  std::string cluster;
  std::string zookeeper;  // the connect string it was read from
  coordinator::Configuration config;
  // One per member in config order, or empty when Stats were not asked for (--stats=false).
  std::vector<MemberStats> stats;
};

std::string FormatStatusText(const StatusView& view);
std::string FormatStatusJson(const StatusView& view);
std::string FormatRegionsText(const coordinator::Configuration& config);
std::string FormatRegionsJson(const coordinator::Configuration& config);

// Pieces, exposed for tests.
// "shm", "tcp", "verbs", "sim", "unspecified".
std::string FabricName(coordinator::FabricKind kind);
// Binary units: "0", "512B", "16MiB", "1.5GiB".
std::string HumanBytes(uint64_t bytes);
// "850ms", "12.3s", "4m05s", "2h03m", "3d04h".
std::string HumanDuration(uint64_t micros);
// A JSON string literal, quotes included.
std::string JsonString(const std::string& s);
// Rows as columns separated by two spaces, each as wide as its widest cell; no trailing spaces.
std::string AlignColumns(const std::vector<std::vector<std::string>>& rows);

}  // namespace fathom::fathomctl

#endif  // FATHOM_TOOLS_FATHOMCTL_REPORT_H_
