#include "txn/testing/txn_cluster.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fathom::txn::testing {

const char* TestFabricName(TestFabric fabric) {
  switch (fabric) {
    case TestFabric::kShm:
      return "Shm";
    case TestFabric::kSim:
      return "Sim";
    case TestFabric::kTcp:
      return "Tcp";
  }
  return "?";
}

server::EmbeddedClusterOptions TestClusterOptions(TestFabric fabric, uint64_t seed, uint64_t memory_bytes) {
  server::EmbeddedClusterOptions options;
  options.nodes = 3;
  options.threads = 2;
  options.memory_bytes = memory_bytes;
  if (fabric == TestFabric::kTcp) options.fabric = server::EmbeddedFabric::kUcxTcp;
  if (fabric == TestFabric::kSim) {
    options.fabric = server::EmbeddedFabric::kSim;
    options.sim.seed = seed;
    options.sim.torn_copies = true;
    options.sim.max_latency = absl::Microseconds(20);
    options.sim.fabric.operation_timeout = absl::Seconds(2);
  }
  return options;
}

absl::StatusOr<std::unique_ptr<TxnCluster>> TxnCluster::Start(server::EmbeddedClusterOptions options, TxnOptions txn) {
  options.transactions = txn;
  options.attach_transactions = true;
  auto cluster = server::EmbeddedCluster::Start(options);
  if (!cluster.ok()) return cluster.status();
  auto result = std::unique_ptr<TxnCluster>(new TxnCluster());
  result->cluster_ = std::move(*cluster);
  for (int i = 1; i <= result->cluster_->size(); ++i) {
    result->services_.push_back(&result->cluster_->server(i).transactions());
  }
  if (options.coordinated) {
    // Members connect as the configuration reaches them: wait until every pair is connected and every
    // transaction layer has every node as a data member.
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    for (int i = 1; i <= result->cluster_->size(); ++i) {
      while (result->cluster_->node(i).connected_peers().size() + 1 < static_cast<size_t>(result->cluster_->size()) ||
             result->services_[i - 1]->replicas()->members().size() < static_cast<size_t>(result->cluster_->size())) {
        if (absl::Now() > deadline) return absl::DeadlineExceededError(absl::StrCat("node ", i, " never connected"));
        absl::SleepFor(absl::Milliseconds(5));
      }
    }
  }
  return result;
}

TxnCluster::~TxnCluster() = default;  // the cluster stops its servers: nodes first, then their layers

absl::Status TxnCluster::WaitForQuiescence(absl::Duration timeout) {
  return testing::WaitForQuiescence(services_, timeout);
}

absl::Status TxnCluster::CheckReplicasIdentical() {
  for (int p = 1; p <= size(); ++p) {
    for (memory::LocalRegion* region : cluster_->node(p).data_regions()) {
      auto backups = services_[p - 1]->replicas()->BackupsOf(region->id());
      if (!backups.ok()) return backups.status();
      const std::span<const std::byte> primary(region->data(), region->size());
      for (uint32_t b : *backups) {
        std::span<const std::byte> copy = services_[b - 1]->backups().View(region->id());
        if (copy.empty()) {
          // Never written through a transaction: the primary must be untouched too.
          for (size_t i = 0; i < primary.size(); ++i) {
            if (primary[i] != std::byte{0}) {
              return absl::DataLossError(absl::StrCat("region ", region->id(), " of node ", p, " has data at ", i,
                                                      " but node ", b, " holds no backup of it"));
            }
          }
          continue;
        }
        if (copy.size() != primary.size()) {
          return absl::DataLossError(absl::StrCat("backup of region ", region->id(), " on node ", b, " has ",
                                                  copy.size(), " bytes, the primary ", primary.size()));
        }
        if (std::memcmp(copy.data(), primary.data(), primary.size()) != 0) {
          size_t at = 0;
          while (copy[at] == primary[at]) ++at;
          return absl::DataLossError(absl::StrCat("backup of region ", region->id(), " on node ", b,
                                                  " differs from its primary (node ", p, ") at offset ", at));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status WaitForQuiescence(const std::vector<TransactionService*>& services, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  // One pass reads the nodes one after another: a COMMIT-BACKUP and its TRUNCATE written into a backup's
  // ring but not yet consumed show nowhere (the coordinator owes nothing, the backup keeps no record yet).
  // So quiet must last: a node thread takes a ring's records within its idle wait (5 ms), far below this
  // even on a loaded machine.
  constexpr absl::Duration kQuietFor = absl::Milliseconds(200);
  absl::Time quiet_since = absl::InfiniteFuture();
  std::string last;
  while (absl::Now() < deadline) {
    bool quiet = true;
    last.clear();
    for (size_t i = 0; i < services.size(); ++i) {
      auto stats = services[i]->Stats();
      if (!stats.ok()) return stats.status();
      if (stats->log_entries != 0 || stats->truncations_owed != 0) {
        quiet = false;
        absl::StrAppend(&last, " node ", i + 1, ": ", stats->log_entries, " log entries, ", stats->truncations_owed,
                        " truncations owed;");
      }
    }
    if (!quiet) {
      quiet_since = absl::InfiniteFuture();
    } else if (quiet_since == absl::InfiniteFuture()) {
      quiet_since = absl::Now();
    } else if (absl::Now() - quiet_since >= kQuietFor) {
      return absl::OkStatus();
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  return absl::DeadlineExceededError(absl::StrCat("not quiet after ", absl::FormatDuration(timeout), ":", last));
}

}  // namespace fathom::txn::testing
