// See report.h.
#include "tools/fathomctl/report.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace fathom::fathomctl {
namespace {

using coordinator::Configuration;
using coordinator::MemberInfo;
using coordinator::RegionPlacement;

uint64_t Counter(const control::StatsResponse& stats, const std::string& name, uint64_t otherwise = 0) {
  auto it = stats.counters().find(name);
  return it == stats.counters().end() ? otherwise : it->second;
}

bool HasCounter(const control::StatsResponse& stats, const std::string& name) {
  return stats.counters().find(name) != stats.counters().end();
}

std::string TableKindName(coordinator::TableKind kind) {
  switch (kind) {
    case coordinator::TABLE_KIND_HOPSCOTCH: return "hopscotch";
    case coordinator::TABLE_KIND_CUCKOO: return "cuckoo";
    default: return "unspecified";
  }
}

std::string Backups(const RegionPlacement& region) {
  return region.backups().empty() ? "-" : absl::StrJoin(region.backups(), ",");
}

std::string RegionsTable(const Configuration& config) {
  if (config.regions().empty()) return "no regions\n";
  std::vector<std::vector<std::string>> rows = {{"REGION", "SIZE", "PRIMARY", "BACKUPS"}};
  for (const RegionPlacement& r : config.regions()) {
    rows.push_back({absl::StrCat(r.region_id()), HumanBytes(r.size_bytes()), absl::StrCat(r.primary()), Backups(r)});
  }
  return AlignColumns(rows);
}

std::string LostRegions(const Configuration& config) {
  if (config.lost_regions().empty()) return "";
  return absl::StrCat("lost regions (no replica left): ", absl::StrJoin(config.lost_regions(), ", "), "\n");
}

std::string Tables(const Configuration& config) {
  std::string out;
  if (!config.tables().empty()) {
    std::vector<std::vector<std::string>> rows = {{"TABLE", "KIND", "EPOCH", "ROOT"}};
    for (const coordinator::TableDescriptor& t : config.tables()) {
      rows.push_back({t.name(), TableKindName(t.kind()), absl::StrCat(t.epoch()),
                      t.root_region() == 0 ? "-" : absl::StrCat(t.root_region(), "+", t.root_offset())});
    }
    absl::StrAppend(&out, "\n", AlignColumns(rows));
  }
  return out;
}

std::string JsonUintList(const google::protobuf::RepeatedField<uint32_t>& values) {
  return absl::StrCat("[", absl::StrJoin(values, ","), "]");
}

std::string RegionsJsonArray(const Configuration& config) {
  std::vector<std::string> regions;
  for (const RegionPlacement& r : config.regions()) {
    regions.push_back(absl::StrCat("{\"region_id\":", r.region_id(), ",\"size_bytes\":", r.size_bytes(),
                                   ",\"primary\":", r.primary(), ",\"backups\":", JsonUintList(r.backups()), "}"));
  }
  return absl::StrCat("[", absl::StrJoin(regions, ","), "]");
}

// The SSD log's durability lag from the log.* counters (logging/object_log.h): records appended but not
// yet on disk, and the age of the oldest of them.
bool HasLog(const control::StatsResponse& stats) { return HasCounter(stats, "log.lag_records"); }

std::string LogLagText(const control::StatsResponse& stats) {
  if (!HasLog(stats)) return "off";
  const uint64_t micros = Counter(stats, "log.lag_micros");
  return absl::StrCat(Counter(stats, "log.lag_records"), " rec/",
                      micros < 1000 ? absl::StrCat(micros, "us") : HumanDuration(micros),
                      Counter(stats, "log.error") != 0 ? " FAILING" : "");
}

std::string LogJson(const control::StatsResponse& stats) {
  if (!HasLog(stats)) return "null";
  return absl::StrCat("{\"lag_records\":", Counter(stats, "log.lag_records"),
                      ",\"lag_micros\":", Counter(stats, "log.lag_micros"),
                      ",\"enqueued_position\":", Counter(stats, "log.enqueued_position"),
                      ",\"persisted_position\":", Counter(stats, "log.persisted_position"),
                      ",\"write_errors\":", Counter(stats, "log.write_errors"),
                      ",\"failing\":", Counter(stats, "log.error") != 0 ? "true" : "false", "}");
}

// Memory the node's objects take (node_data.cc's gauges, docs/formats/control.md): slabs carved for slots.
bool HasMemory(const control::StatsResponse& stats) { return HasCounter(stats, "memory.carved_bytes"); }

std::string MemoryUsedText(const control::StatsResponse& stats) {
  return HasMemory(stats) ? HumanBytes(Counter(stats, "memory.carved_bytes")) : "?";
}

std::string MemoryJson(const control::StatsResponse& stats) {
  if (!HasMemory(stats)) return "null";
  return absl::StrCat("{\"region_bytes\":", Counter(stats, "memory.region_bytes"),
                      ",\"carved_bytes\":", Counter(stats, "memory.carved_bytes"),
                      ",\"region_copy_bytes\":", Counter(stats, "memory.region_copy_bytes"), "}");
}

std::string StatsJson(const MemberStats& s) {
  if (!s.status.ok()) return absl::StrCat("{\"reachable\":false,\"error\":", JsonString(s.status.ToString()), "}");
  // Counters in name order, so equal stats print equally.
  std::map<std::string, uint64_t> counters(s.stats.counters().begin(), s.stats.counters().end());
  std::vector<std::string> entries;
  for (const auto& [name, value] : counters) entries.push_back(absl::StrCat(JsonString(name), ":", value));
  return absl::StrCat("{\"reachable\":true,\"peers\":", Counter(s.stats, "node.peers"),
                      ",\"coordinator_connected\":", Counter(s.stats, "coordinator.connected") != 0 ? "true" : "false",
                      ",\"applied_epoch\":", Counter(s.stats, "coordinator.applied_epoch"),
                      ",\"uptime_seconds\":", absl::StrFormat("%.3f", s.stats.uptime_micros() / 1e6),
                      ",\"log\":", LogJson(s.stats), ",\"memory\":", MemoryJson(s.stats),
                      ",\"incarnation\":\"", s.stats.incarnation(), "\",\"counters\":{", absl::StrJoin(entries, ","),
                      "}}");
}

}  // namespace

std::string FabricName(coordinator::FabricKind kind) {
  switch (kind) {
    case coordinator::FABRIC_KIND_UCX_SHARED_MEMORY: return "shm";
    case coordinator::FABRIC_KIND_UCX_TCP: return "tcp";
    case coordinator::FABRIC_KIND_UCX_VERBS: return "verbs";
    case coordinator::FABRIC_KIND_SIM: return "sim";
    default: return "unspecified";
  }
}

std::string HumanBytes(uint64_t bytes) {
  if (bytes == 0) return "0";
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return absl::StrCat(bytes, "B");
  if (bytes % (uint64_t{1} << (10 * unit)) == 0) return absl::StrCat(bytes >> (10 * unit), kUnits[unit]);
  return absl::StrFormat("%.1f%s", value, kUnits[unit]);
}

std::string HumanDuration(uint64_t micros) {
  if (micros < 1'000'000) return absl::StrCat(micros / 1000, "ms");
  if (micros < 60'000'000) return absl::StrFormat("%.1fs", micros / 1e6);
  const uint64_t s = micros / 1'000'000;
  if (s < 3600) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  if (s < 86400) return absl::StrFormat("%dh%02dm", s / 3600, s % 3600 / 60);
  return absl::StrFormat("%dd%02dh", s / 86400, s % 86400 / 3600);
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          absl::StrAppend(&out, absl::StrFormat("\\u%04x", c));
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string AlignColumns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) line += "  ";
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

// The leases as the CM reports them in its Stats (lease.member.<id>.*), one per member but the CM; empty
// when the CM's Stats are missing or it grants no leases.
struct LeaseRow {
  uint32_t node_id = 0;
  uint64_t age_ms = 0;
  uint64_t expires_in_ms = 0;
  uint64_t renewals = 0;
};
const control::StatsResponse* ManagerStats(const StatusView& view) {
  for (size_t i = 0; i < view.stats.size() && i < static_cast<size_t>(view.config.members_size()); ++i) {
    if (view.config.members(i).node_id() == view.config.manager_id() && view.stats[i].status.ok()) {
      return &view.stats[i].stats;
    }
  }
  return nullptr;
}
std::vector<LeaseRow> Leases(const StatusView& view) {
  std::vector<LeaseRow> rows;
  const control::StatsResponse* cm = ManagerStats(view);
  if (cm == nullptr || !HasCounter(*cm, "lease.period_ms")) return rows;
  for (const MemberInfo& m : view.config.members()) {
    const std::string prefix = absl::StrCat("lease.member.", m.node_id(), ".");
    if (!HasCounter(*cm, prefix + "age_ms")) continue;
    rows.push_back({m.node_id(), Counter(*cm, prefix + "age_ms"), Counter(*cm, prefix + "expires_in_ms"),
                    Counter(*cm, prefix + "renewals")});
  }
  return rows;
}

std::string LeasesText(const StatusView& view) {
  const control::StatsResponse* cm = ManagerStats(view);
  if (cm == nullptr || !HasCounter(*cm, "lease.period_ms")) return "";
  std::vector<std::vector<std::string>> rows = {{"LEASE", "RENEWED", "EXPIRES IN", "RENEWALS"}};
  for (const LeaseRow& l : Leases(view)) {
    rows.push_back({absl::StrCat("node ", l.node_id), absl::StrCat(HumanDuration(l.age_ms * 1000), " ago"),
                    HumanDuration(l.expires_in_ms * 1000), absl::StrCat(l.renewals)});
  }
  return absl::StrCat("leases (period ", HumanDuration(Counter(*cm, "lease.period_ms") * 1000),
                      ", as the manager sees them; expired so far: ", Counter(*cm, "lease.expiries"), ")\n",
                      AlignColumns(rows), "\n");
}

std::string FormatStatusText(const StatusView& view) {
  const Configuration& config = view.config;
  std::string out = absl::StrCat("cluster '", view.cluster, "' (ZooKeeper ", view.zookeeper, "): epoch ",
                                 config.epoch(), ", manager ",
                                 config.manager_id() == 0 ? "none" : absl::StrCat("node ", config.manager_id()), ", ",
                                 config.members_size(), config.members_size() == 1 ? " member, " : " members, ",
                                 config.regions_size(), config.regions_size() == 1 ? " region" : " regions", "\n\n");
  const bool with_stats = !view.stats.empty();
  std::vector<std::vector<std::string>> rows;
  if (with_stats) {
    rows.push_back({"NODE", "ROLE", "CONTROL", "FABRIC", "MEMORY", "INCARNATION", "STATS", "USED", "PEERS", "ZK",
                    "EPOCH", "UPTIME", "LOG LAG"});
  } else {
    rows.push_back({"NODE", "ROLE", "CONTROL", "FABRIC", "MEMORY", "INCARNATION"});
  }
  std::vector<std::string> problems;
  for (int i = 0; i < config.members_size(); ++i) {
    const MemberInfo& m = config.members(i);
    std::vector<std::string> row = {absl::StrCat(m.node_id()), m.node_id() == config.manager_id() ? "manager" : (m.client_only() ? "client" : "-"),
                                    m.control_address(), FabricName(m.fabric()),
                                    m.memory_bytes() == 0 ? "?" : HumanBytes(m.memory_bytes()),
                                    absl::StrCat(m.incarnation())};
    if (with_stats && i < static_cast<int>(view.stats.size())) {
      const MemberStats& s = view.stats[i];
      if (!s.status.ok()) {
        row.insert(row.end(), {"unreachable", "-", "-", "-", "-", "-", "-"});
        problems.push_back(absl::StrCat("node ", m.node_id(), " unreachable: ", s.status.ToString()));
      } else {
        const bool restarted = s.stats.incarnation() != m.incarnation();
        row.insert(row.end(),
                   {restarted ? "restarted" : "ok", MemoryUsedText(s.stats), absl::StrCat(Counter(s.stats, "node.peers")),
                    !HasCounter(s.stats, "coordinator.connected")  ? "?"
                    : Counter(s.stats, "coordinator.connected") != 0 ? "connected"
                                                                     : "DISCONNECTED",
                    HasCounter(s.stats, "coordinator.applied_epoch")
                        ? absl::StrCat(Counter(s.stats, "coordinator.applied_epoch"))
                        : "?",
                    HumanDuration(s.stats.uptime_micros()), LogLagText(s.stats)});
        if (HasLog(s.stats) && Counter(s.stats, "log.error") != 0) {
          problems.push_back(absl::StrCat("node ", m.node_id(), ": SSD log writes failing (",
                                          Counter(s.stats, "log.write_errors"), " errors so far); its lag grows"));
        }
        if (restarted) {
          problems.push_back(absl::StrCat("node ", m.node_id(), " answers with incarnation ", s.stats.incarnation(),
                                          ", not the configuration's ", m.incarnation(), " (restarted)"));
        }
      }
    }
    rows.push_back(std::move(row));
  }
  absl::StrAppend(&out, AlignColumns(rows));
  for (const std::string& p : problems) absl::StrAppend(&out, p, "\n");
  absl::StrAppend(&out, "\n", LeasesText(view), RegionsTable(config), LostRegions(config), Tables(config));
  return out;
}

std::string FormatStatusJson(const StatusView& view) {
  const Configuration& config = view.config;
  std::vector<std::string> members;
  for (int i = 0; i < config.members_size(); ++i) {
    const MemberInfo& m = config.members(i);
    std::string member = absl::StrCat(
        "{\"node_id\":", m.node_id(), ",\"control_address\":", JsonString(m.control_address()),
        ",\"fabric\":", JsonString(FabricName(m.fabric())), ",\"memory_bytes\":", m.memory_bytes(),
        ",\"incarnation\":\"", m.incarnation(), "\",\"manager\":", m.node_id() == config.manager_id() ? "true" : "false",
        ",\"client_only\":", m.client_only() ? "true" : "false");
    if (i < static_cast<int>(view.stats.size())) absl::StrAppend(&member, ",\"stats\":", StatsJson(view.stats[i]));
    members.push_back(member + "}");
  }
  std::vector<std::string> tables;
  for (const coordinator::TableDescriptor& t : config.tables()) {
    tables.push_back(absl::StrCat("{\"name\":", JsonString(t.name()), ",\"kind\":", JsonString(TableKindName(t.kind())),
                                  ",\"epoch\":", t.epoch(), ",\"root_region\":", t.root_region(),
                                  ",\"root_offset\":", t.root_offset(), "}"));
  }
  std::vector<std::string> leases;
  for (const LeaseRow& l : Leases(view)) {
    leases.push_back(absl::StrCat("{\"node_id\":", l.node_id, ",\"age_ms\":", l.age_ms, ",\"expires_in_ms\":",
                                  l.expires_in_ms, ",\"renewals\":", l.renewals, "}"));
  }
  return absl::StrCat("{\"cluster\":", JsonString(view.cluster), ",\"zookeeper\":", JsonString(view.zookeeper),
                      ",\"epoch\":", config.epoch(), ",\"manager\":", config.manager_id(), ",\"members\":[",
                      absl::StrJoin(members, ","), "],\"leases\":[", absl::StrJoin(leases, ","),
                      "],\"regions\":", RegionsJsonArray(config),
                      ",\"lost_regions\":", JsonUintList(config.lost_regions()), ",\"tables\":[",
                      absl::StrJoin(tables, ","), "]}\n");
}

std::string FormatRegionsText(const Configuration& config) {
  return absl::StrCat(RegionsTable(config), LostRegions(config));
}

std::string FormatRegionsJson(const Configuration& config) {
  return absl::StrCat("{\"epoch\":", config.epoch(), ",\"regions\":", RegionsJsonArray(config),
                      ",\"lost_regions\":", JsonUintList(config.lost_regions()), "}\n");
}

}  // namespace fathom::fathomctl
