#include "logging/txn_hook.h"

namespace fathom::logging {

ObjectState StateOf(const txn::TxnId& id, uint64_t log_epoch, const txn::WriteEntry& entry, uint64_t new_version,
                    bool as_backup) {
  ObjectState state;
  state.address = entry.ref.address;
  state.capacity = entry.ref.capacity;
  state.incarnation = entry.new_incarnation();
  state.flags = entry.new_flags();
  state.version = new_version;
  state.payload = entry.payload;  // exactly what the slot gets (a free's is empty)
  state.role = as_backup ? Role::kBackup : Role::kPrimary;
  state.txn_epoch = id.epoch;
  state.txn_node = id.node;
  state.txn_thread = id.thread;
  state.txn_counter = id.counter;
  state.log_epoch = log_epoch;
  return state;
}

txn::InstallObserver InstallObserverFor(ObjectLog* log) {
  return [log](const txn::TxnId& id, uint64_t log_epoch, const txn::WriteEntry& entry, uint64_t new_version,
               bool as_backup) { log->Append(StateOf(id, log_epoch, entry, new_version, as_backup)); };
}

txn::EpochLog EpochLogFor(ObjectLog* log) {
  txn::EpochLog epochs;
  epochs.close = [log](uint64_t epoch) { log->CloseEpoch(epoch); };
  epochs.persisted = [log] { return log->PersistedEpoch(); };
  epochs.durable = [log](uint64_t epoch) { log->SetDurableEpoch(epoch); };
  return epochs;
}

}  // namespace fathom::logging
