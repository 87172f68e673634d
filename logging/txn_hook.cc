#include "logging/txn_hook.h"

namespace fathom::logging {

ObjectState StateOf(const txn::TxnId& id, const txn::WriteEntry& entry, uint64_t new_version, bool as_backup) {
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
  return state;
}

txn::InstallObserver InstallObserverFor(ObjectLog* log) {
  return [log](const txn::TxnId& id, const txn::WriteEntry& entry, uint64_t new_version, bool as_backup) {
    log->Append(StateOf(id, entry, new_version, as_backup));
  };
}

txn::SyncLog SyncLogFor(ObjectLog* log) {
  txn::SyncLog sync;
  sync.append = [log](const txn::TxnId& id, const txn::WriteEntry& entry, uint64_t new_version, bool as_backup) {
    return log->Append(StateOf(id, entry, new_version, as_backup));
  };
  sync.persisted = [log] { return log->PersistedPosition(); };
  return sync;
}

}  // namespace fathom::logging
