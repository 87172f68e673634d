// What a node's transaction layer shares between the service, its transactions and the node threads.
#ifndef FATHOM_TXN_SHARED_H_
#define FATHOM_TXN_SHARED_H_

#include <atomic>
#include <memory>
#include <vector>

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
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_SHARED_H_
