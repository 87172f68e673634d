// What a node's transaction layer shares between the service, its transactions and the node threads.
#ifndef FATHOM_TXN_SHARED_H_
#define FATHOM_TXN_SHARED_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "platform/node/node.h"
#include "txn/backup_store.h"
#include "txn/log_epochs.h"
#include "txn/txn.h"
#include "txn/txn_thread.h"

namespace fathom::txn {

struct Transaction::Shared {
  Shared(node::Node* node, const TxnOptions& options) : node(node), options(options) {}
  node::Node* node;
  const TxnOptions options;
  BackupStore backups;
  std::unique_ptr<LogEpochs> log_epochs;  // null: the cluster runs no log epochs
  // Created before the node threads use them, never resized after: each is touched only on its thread.
  std::vector<std::unique_ptr<TxnThread>> threads;
  std::atomic<uint64_t> next_thread{0};
  // Promotions waiting (promotion.cc): region -> the map epoch in which this node first found itself its
  // primary and not serving it. Every member must have announced that epoch before the region is served.
  absl::Mutex promotions_mu;
  absl::flat_hash_map<uint32_t, uint64_t> promoted_in ABSL_GUARDED_BY(promotions_mu);
  // Data recovery in progress (data_recovery.cc): how far each (region, new backup) copy got, and the
  // byte allowance of its pace.
  struct FillCursor {
    uint64_t incarnation = 0;  // the backup's process: another one starts from 0
    uint64_t offset = 0;       // the walk resumes here
  };
  absl::Mutex fills_mu;
  std::map<std::pair<uint32_t, uint32_t>, FillCursor> fill_cursors ABSL_GUARDED_BY(fills_mu);
  int64_t fill_allowance ABSL_GUARDED_BY(fills_mu) = 0;
  absl::Time fill_allowance_at ABSL_GUARDED_BY(fills_mu) = absl::InfinitePast();
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_SHARED_H_
