#include "logging/testing/logged_cluster.h"

#include <atomic>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "logging/log_reader.h"
#include "logging/txn_hook.h"
#include "platform/memory/global_address.h"
#include "platform/object/object_layout.h"
#include "txn/testing/txn_cluster.h"

namespace fathom::logging::testing {
namespace {

std::string NodeDir(const std::string& root, uint32_t id) { return absl::StrCat(root, "/node", id); }

}  // namespace

absl::StatusOr<std::unique_ptr<LoggedCluster>> LoggedCluster::Start(LoggedClusterOptions options) {
  auto result = std::unique_ptr<LoggedCluster>(new LoggedCluster());
  const int n = options.cluster.nodes;
  // Read every log before anything opens them (a RocksDB database has one writer).
  ClusterImage image;
  if (options.restore) {
    for (int i = 1; i <= n; ++i) {
      auto contents = ReadLog(NodeDir(options.root, i), i);
      if (!contents.ok()) return contents.status();
      result->restored_.logs.push_back(std::move(*contents));
    }
    image = MergeLogs(result->restored_.logs);
  }
  // The nodes without a transaction layer: this cluster attaches its own, with each node's log hooks.
  options.cluster.attach_transactions = false;
  auto cluster = server::EmbeddedCluster::Start(options.cluster);
  if (!cluster.ok()) return cluster.status();
  result->cluster_ = std::move(*cluster);
  std::map<uint32_t, uint64_t> region_bytes;
  for (int i = 1; i <= n; ++i) {
    for (memory::LocalRegion* region : result->cluster_->node(i).data_regions()) {
      region_bytes[region->id()] = region->size();
    }
  }
  if (options.restore) {
    for (int i = 1; i <= n; ++i) {
      auto restored = RestorePrimaries(result->cluster_->node(i), image);
      if (!restored.ok()) return restored.status();
      result->restored_.primaries += *restored;
    }
  }
  if (options.logging) {
    for (int i = 1; i <= n; ++i) {
      ObjectLogOptions log_options = options.log;
      log_options.dir = NodeDir(options.root, i);
      log_options.node_id = i;
      if (options.restore) log_options.cut = image.log_epoch;
      auto log = ObjectLog::Open(log_options);
      if (!log.ok()) return log.status();
      result->cluster_->node(i).AddCounterSource((*log)->CounterSource());
      result->logs_.push_back(std::move(*log));
    }
  }
  std::vector<uint32_t> members;
  for (int i = 1; i <= n; ++i) members.push_back(i);
  // A restarted cluster runs in a later configuration, so its transaction ids never repeat old ones.
  result->restored_.epoch = options.restore ? image.max_epoch + 1 : 1;
  // Every node starts in the same log epoch: after the newest any log closed (after a restore, the cut).
  uint64_t first_log_epoch = 1;
  for (auto& log : result->logs_) first_log_epoch = std::max(first_log_epoch, log->PersistedEpoch().value_or(0) + 1);
  result->restored_.log_epoch = image.log_epoch;
  for (int i = 1; i <= n; ++i) {
    txn::TxnOptions txn = options.txn;
    if (options.logging) {
      txn.on_install = InstallObserverFor(result->logs_[i - 1].get());
      if (options.log_epochs) {
        txn.epoch_log = EpochLogFor(result->logs_[i - 1].get());
        txn.first_log_epoch = first_log_epoch;
        if (auto it = options.first_log_epochs.find(i); it != options.first_log_epochs.end()) {
          txn.first_log_epoch = it->second;
        }
        txn.start_log_epochs = false;  // once every node has attached
      }
    }
    size_t backups_restored = 0;
    if (options.restore) {
      // Attach calls it once, before it returns (the references are to this frame).
      txn.restore_backups = [&](txn::BackupStore& store) -> absl::Status {
        auto restored = RestoreBackups(store, image, image.backup_regions[i],
                                       [&](uint32_t region) { return region_bytes[region]; });
        if (!restored.ok()) return restored.status();
        backups_restored = *restored;
        return absl::OkStatus();
      };
    }
    auto service = txn::TransactionService::Attach(&result->cluster_->node(i), txn);
    if (!service.ok()) return service.status();
    result->restored_.backups += backups_restored;
    result->cluster_->node(i).region_directory().Set(
        memory::RegionMap::ByOwner(result->restored_.epoch, members, txn.backups));
    result->services_.push_back(std::move(*service));
  }
  for (auto& service : result->services_) service->StartLogEpochs();
  return result;
}

LoggedCluster::~LoggedCluster() {
  // The nodes stop first (their threads hold the layer and call the logs), then the services, then the
  // logs drain.
  cluster_.reset();
  services_.clear();
  logs_.clear();
}

void LoggedCluster::Crash() {
  cluster_.reset();
  services_.clear();
  for (auto& log : logs_) log->Abandon();
  logs_.clear();
}

std::vector<txn::TransactionService*> LoggedCluster::services() {
  std::vector<txn::TransactionService*> all;
  for (auto& s : services_) all.push_back(s.get());
  return all;
}

absl::Status LoggedCluster::WaitForLogs(absl::Duration timeout) {
  // Whatever committed so far is in the current log epoch or an earlier one: wait until every log closed it.
  if (const txn::LogEpochs* epochs = services_.empty() ? nullptr : services_[0]->log_epochs(); epochs != nullptr) {
    const uint64_t epoch = epochs->current();
    const absl::Time deadline = absl::Now() + timeout;
    for (auto& log : logs_) {
      while (log->PersistedEpoch().value_or(0) < epoch) {
        if (absl::Now() >= deadline) {
          return absl::DeadlineExceededError(absl::StrCat("log ", log->dir(), " has not closed log epoch ", epoch,
                                                          " (closed: ", log->PersistedEpoch().value_or(0), ")"));
        }
        absl::SleepFor(absl::Milliseconds(1));
      }
    }
  }
  for (auto& log : logs_) {
    if (absl::Status s = log->WaitForPersisted(timeout); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status LoggedCluster::WaitForQuiescence(absl::Duration timeout) {
  return txn::testing::WaitForQuiescence(services(), timeout);
}

std::map<uint32_t, std::string> LoggedCluster::Memory() {
  std::map<uint32_t, std::string> memory;
  for (int i = 1; i <= size(); ++i) {
    for (memory::LocalRegion* region : cluster().node(i).data_regions()) {
      memory[region->id()] = Copy(region->data(), region->size());
    }
  }
  return memory;
}

std::map<uint64_t, uint64_t> LoggedCluster::SlotVersions(const std::map<uint32_t, std::string>& memory) {
  std::map<uint64_t, uint64_t> versions;
  for (const auto& [region, bytes] : memory) {
    for (size_t at = 0; at + 64 <= bytes.size(); at += 64) {
      uint64_t word;
      std::memcpy(&word, bytes.data() + at + object::kVersionOffset, 8);
      if (word != 0) versions[memory::GlobalAddress{region, static_cast<uint32_t>(at)}.raw()] = word & object::kVersionMask;
    }
  }
  return versions;
}

std::string LoggedCluster::Copy(const std::byte* bytes, size_t size) {
  std::string out(size, '\0');
  for (size_t at = 0; at + 8 <= size; at += 8) {
    const uint64_t word =
        std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<std::byte*>(bytes + at)))
            .load(std::memory_order_acquire);
    std::memcpy(out.data() + at, &word, 8);
  }
  return out;
}

absl::Status LoggedCluster::CheckReplicasIdentical() {
  for (int p = 1; p <= size(); ++p) {
    for (memory::LocalRegion* region : cluster_->node(p).data_regions()) {
      auto backups = services_[p - 1]->replicas()->BackupsOf(region->id());
      if (!backups.ok()) return backups.status();
      const std::string primary = Copy(region->data(), region->size());
      for (uint32_t b : *backups) {
        std::span<const std::byte> view = services_[b - 1]->backups().View(region->id());
        const std::string copy = Copy(view.data(), view.size());
        if (copy.empty()) {
          for (size_t i = 0; i < primary.size(); ++i) {
            if (primary[i] != '\0') {
              return absl::DataLossError(absl::StrCat("region ", region->id(), " of node ", p, " has data at ", i,
                                                      " but node ", b, " holds no backup of it"));
            }
          }
          continue;
        }
        if (copy.size() != primary.size() || std::memcmp(copy.data(), primary.data(), primary.size()) != 0) {
          size_t at = 0;
          while (at < copy.size() && at < primary.size() && copy[at] == primary[at]) ++at;
          return absl::DataLossError(absl::StrCat("backup of region ", region->id(), " on node ", b,
                                                  " differs from its primary (node ", p, ") at offset ", at));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace fathom::logging::testing
