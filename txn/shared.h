// What a node's transaction layer shares between the service, its transactions and the node threads.
#ifndef FATHOM_TXN_SHARED_H_
#define FATHOM_TXN_SHARED_H_

#include <atomic>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
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
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_SHARED_H_
