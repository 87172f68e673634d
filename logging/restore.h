// Whole-cluster restart from the SSD logs: every node's memory, and every backup copy, is rebuilt from
// the newest logged state of each object, before the transaction layer attaches.
//
//   std::vector<logging::LogContents> logs;                       // every node's ReadLog
//   logging::ClusterImage image = logging::MergeLogs(logs);
//   // per node, after Node::Start and before TransactionService::Attach:
//   RETURN_IF_ERROR(logging::RestorePrimaries(*node, image).status());
//   txn_options.restore_backups = [&](txn::BackupStore& store) {
//     return logging::RestoreBackups(store, image, image.backup_regions[id], region_bytes).status();
//   };
//
// Merging restores exactly the log epochs every node's log closed (txn/log_epochs.h: the smallest
// m:closed of all logs), which is a consistent cut: whole transactions, and every transaction they read
// from. Per object it takes, among the states of those epochs, the one with the highest version in any
// node's log (a primary and its backups log the same states; whichever persisted the newest wins), so the
// f+1 copies come back identical. Logs of a cluster without log epochs hold states of epoch 0 only, and
// all of them are restored (the newest per object: consistent within a node only).
#ifndef FATHOM_LOGGING_RESTORE_H_
#define FATHOM_LOGGING_RESTORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "logging/log_reader.h"
#include "platform/node/node.h"
#include "txn/backup_store.h"

namespace fathom::logging {

struct ClusterImage {
  std::map<uint64_t, ObjectState> newest;                 // by raw address
  std::map<uint32_t, std::set<uint32_t>> backup_regions;  // node -> regions it logged backup states of
  uint64_t max_epoch = 0;                                 // the newest configuration epoch logged
  uint64_t log_epoch = 0;  // the log epochs restored: every one up to this (the restarted cluster goes on after it)
};

ClusterImage MergeLogs(const std::vector<LogContents>& logs);

// Writes the image's states of `node`'s data regions into them (on node thread 0, each slot locked while
// it is written, at the logged version) and claims their slots from thread 0's allocator, so they are
// never allocated again; freed slots go to its free list, keeping their incarnation. Returns how many.
// REQUIRES: no transaction has run on the node (call before TransactionService::Attach).
// InvalidArgument (naming the address) for a state that is not a slot of the node's regions.
absl::StatusOr<size_t> RestorePrimaries(node::Node& node, const ClusterImage& image);

// Installs the image's states of `regions` into `backups` (TxnOptions::restore_backups). `region_bytes`
// is each region's size (as its primary has it).
absl::StatusOr<size_t> RestoreBackups(txn::BackupStore& backups, const ClusterImage& image,
                                      const std::set<uint32_t>& regions,
                                      const std::function<uint64_t(uint32_t region)>& region_bytes);

}  // namespace fathom::logging

#endif  // FATHOM_LOGGING_RESTORE_H_
