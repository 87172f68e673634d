// The glue between the transaction layer and the SSD log: what a node installs goes to its ObjectLog,
// and the log's counters go to the node's Stats.
//
//   txn::TxnOptions options;
//   options.on_install = logging::InstallObserverFor(log.get());
//   options.epoch_log = logging::EpochLogFor(log.get());  // log epochs: consistent restarts, kSync
//   options.first_log_epoch = *log->PersistedEpoch() + 1;
//   node->AddCounterSource(log->CounterSource());
#ifndef FATHOM_LOGGING_TXN_HOOK_H_
#define FATHOM_LOGGING_TXN_HOOK_H_

#include "logging/object_log.h"
#include "txn/txn_options.h"

namespace fathom::logging {

// The state an installed entry leaves in its slot.
ObjectState StateOf(const txn::TxnId& id, uint64_t log_epoch, const txn::WriteEntry& entry, uint64_t new_version,
                    bool as_backup);

// Appends every installed state to `log`. REQUIRES: `log` outlives the node's transaction layer (stop
// the node before destroying the log).
txn::InstallObserver InstallObserverFor(ObjectLog* log);
// The same log for log epochs (txn::TxnOptions::epoch_log). REQUIRES: as above.
txn::EpochLog EpochLogFor(ObjectLog* log);

}  // namespace fathom::logging

#endif  // FATHOM_LOGGING_TXN_HOOK_H_
