#include "server/metrics_page.h"

#include <cstdint>
#include <map>

#include "absl/strings/str_cat.h"
#include "platform/metrics/exposition.h"

namespace fathom::server {
namespace {

using metrics::Labels;

// A Stats counter served under a name of its own, typed. Those the node does not report (no log, no
// coordinator, ...) are left out.
struct Named {
  const char* counter;
  const char* name;
  bool monotonic;  // a counter; else a gauge
  const char* help;
};

constexpr Named kNamed[] = {
    {"coordinator.epoch", "fathom_configuration_epoch", false,
     "The newest configuration this node has read from ZooKeeper."},
    {"coordinator.applied_epoch", "fathom_configuration_applied_epoch", false,
     "The configuration this node follows (has applied)."},
    {"coordinator.members", "fathom_configuration_members", false, "Members of that configuration."},
    {"coordinator.manager", "fathom_configuration_manager", false, "1 if this node is the configuration manager."},
    {"msg.send_ring_used_bytes", "fathom_ring_used_bytes", false,
     "Bytes in the send rings to peers not yet consumed (as last credited: an upper bound)."},
    {"msg.send_ring_bytes", "fathom_ring_bytes", false, "Size of the send rings to peers."},
    {"fabric.batches_sent", "fathom_fabric_batches_sent_total", true,
     "Batches of reads, writes and calls this node sent as messages (UCX over tcp)."},
    {"fabric.records_sent", "fathom_fabric_records_sent_total", true, "Reads, writes and calls in those batches."},
    {"fabric.batches_served", "fathom_fabric_batches_served_total", true,
     "Batches of peers' reads, writes and calls this node served."},
    {"fabric.replies_sent", "fathom_fabric_replies_sent_total", true,
     "Messages answering those batches sent alone."},
    {"fabric.replies_with_requests", "fathom_fabric_replies_with_requests_total", true,
     "Messages answering those batches that rode in a batch of this node's own to the same peer."},
    {"memory.region_bytes", "fathom_memory_region_bytes", false, "Memory this node holds as regions it serves."},
    {"memory.carved_bytes", "fathom_memory_carved_bytes", false, "Region memory carved into object slabs."},
    {"memory.huge_page_bytes", "fathom_memory_huge_page_bytes", false,
     "Bytes of this node's own regions on huge pages (the host's vm.nr_hugepages)."},
    {"memory.region_copy_bytes", "fathom_memory_backup_bytes", false,
     "Memory this node holds as backup copies of other nodes' regions."},
    {"memory.slot_bytes_allocated", "fathom_memory_allocated_bytes_total", true, "Bytes of object slots allocated."},
    {"memory.slot_bytes_freed", "fathom_memory_freed_bytes_total", true, "Bytes of object slots freed."},
    {"log.bytes", "fathom_log_bytes_total", true, "Bytes written to the SSD log."},
    {"log.lag_records", "fathom_log_lag_records", false, "Records waiting to be written to the SSD log."},
    {"log.lag_micros", "fathom_log_lag_microseconds", false, "Age of the oldest record waiting for the SSD log."},
    {"lease.held", "fathom_lease_held", false, "1 while this node holds its lease."},
    {"lease.grants", "fathom_lease_grants_total", true, "Lease renewals this node granted (as configuration manager)."},
    {"lease.grants_received", "fathom_lease_renewals_total", true,
     "Lease renewals this node received from the configuration manager."},
    {"lease.suspicions", "fathom_lease_suspicions_total", true,
     "Times this node suspected a member or the configuration manager."},
    {"lease.lapses", "fathom_lease_lapses_total", true, "Times this node's lease lapsed."},
};

void AddTransactions(metrics::Exposition& page, const txn::TxnStats& stats, const Labels& node) {
  const txn::CoordinatorStats& c = stats.coordinator;
  const txn::ParticipantStats& p = stats.participant;
  page.Counter("fathom_txn_commits_total", "Read-write transactions this node coordinated that committed.", node,
               c.committed);
  page.Counter("fathom_txn_read_only_commits_total", "Read-only transactions that validated.", node,
               c.read_only_committed);
  const std::string aborts_help =
      "Transactions that did not commit, by reason (docs/formats/metrics.md) and kind: conflict (retrying may "
      "commit: read, plan, lock, validate, commit) or error (unavailable, deadline_exceeded, other).";
  for (size_t r = 0; r < txn::kAbortReasons; ++r) {
    const auto reason = static_cast<txn::AbortReason>(r);
    Labels labels = node;
    labels.emplace_back("reason", std::string(txn::AbortReasonName(reason)));
    labels.emplace_back("kind", txn::IsConflict(reason) ? "conflict" : "error");
    page.Counter("fathom_txn_aborts_total", aborts_help, labels, c.aborts[r]);
  }
  page.Histogram("fathom_txn_commit_seconds", "Start of commit to OK of read-write transactions.", node,
                 c.commit_latency);
  page.Histogram("fathom_txn_remote_read_seconds",
                 "Execution reads of objects on other nodes, from post to completion (retries of torn or "
                 "locked copies included).",
                 node, c.remote_read_latency);
  const std::string reads_help = "Object reads in transactions' execution: local, or one-sided from another node.";
  Labels local = node, remote = node;
  local.emplace_back("where", "local");
  remote.emplace_back("where", "remote");
  page.Counter("fathom_txn_reads_total", reads_help, local, c.local_reads);
  page.Counter("fathom_txn_reads_total", reads_help, remote, c.execution_reads);
  page.Counter("fathom_txn_validate_reads_total", "One-sided reads validating read sets at commit.", node,
               c.validate_reads);
  page.Counter("fathom_lock_conflicts_total", "LOCK records this node refused (the object was locked or changed).",
               node, p.locks_refused);
  page.Counter("fathom_locks_granted_total", "LOCK records this node granted.", node, p.locks_granted);
  page.Gauge("fathom_txn_log_entries", "Transaction records this node keeps, not truncated yet.", node,
             static_cast<double>(stats.log_entries));
}

void AddTableMemory(metrics::Exposition& page, const std::map<std::string, TableBytes>& tables, const Labels& node) {
  const std::string help =
      "Bytes of this node's memory a table's objects take as primary (backups hold as much again): index (buckets "
      "with their inline values, chunks, root) and values (out-of-line value objects, recounted every 30 s).";
  for (const auto& [name, bytes] : tables) {
    Labels index = node, values = node;
    index.emplace_back("table", name);
    index.emplace_back("part", "index");
    values.emplace_back("table", name);
    values.emplace_back("part", "values");
    page.Gauge("fathom_table_bytes", help, index, static_cast<double>(bytes.index));
    page.Gauge("fathom_table_bytes", help, values, static_cast<double>(bytes.values));
  }
}

}  // namespace

std::string MetricsPage(Server& server, TableMemory* tables) {
  metrics::Exposition page;
  const Labels node = {{"node", absl::StrCat(server.id())}};
  // What the control service's Stats call answers (fathomctl status): the node's counters and its sources'.
  const control::StatsResponse stats = server.node().OnStats();
  const std::map<std::string, uint64_t> counters(stats.counters().begin(), stats.counters().end());
  page.Gauge("fathom_uptime_seconds", "Time since this node started.", node, stats.uptime_micros() / 1e6);

  for (const Named& n : kNamed) {
    auto it = counters.find(n.counter);
    if (it == counters.end()) continue;
    if (n.monotonic) page.Counter(n.name, n.help, node, static_cast<double>(it->second));
    else page.Gauge(n.name, n.help, node, static_cast<double>(it->second));
  }
  if (server.catalog() != nullptr) {
    if (auto tables = server.catalog()->List(); tables.ok()) {
      page.Gauge("fathom_tables", "Tables in the catalog.", node, static_cast<double>(tables->size()));
    }
  }
  if (tables != nullptr) {
    if (auto measured = tables->Measure(server); measured.ok()) AddTableMemory(page, *measured, node);
  }

  if (server.has_transactions()) {
    if (auto txn_stats = server.transactions().Stats(); txn_stats.ok()) AddTransactions(page, *txn_stats, node);
  }

  // Everything the Stats call reports, as it is.
  for (const auto& [dotted, value] : counters) {
    auto [name, labels] = metrics::FromDottedName(dotted);
    labels.insert(labels.begin(), node.front());
    page.Untyped(absl::StrCat("fathom_stats_", name.substr(sizeof("fathom_") - 1)),
                 "A counter of the node's Stats call (fathomctl status), named after it.", labels,
                 static_cast<double>(value));
  }
  return page.Text();
}

}  // namespace fathom::server
