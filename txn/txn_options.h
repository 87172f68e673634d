// Options of the transaction layer.
#ifndef FATHOM_TXN_TXN_OPTIONS_H_
#define FATHOM_TXN_TXN_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "txn/records.h"

namespace fathom::txn {

class BackupStore;

// Told of every object state this node installs: as primary at COMMIT-PRIMARY (as_backup false, called
// while the object is still locked, so a primary's calls for one object come in version order) and as
// backup when truncation changes its copy (as_backup true; appliers on different threads may report one
// object out of order, the version tells). Runs on a node thread: it must only enqueue (logging/).
using InstallObserver =
    std::function<void(const TxnId& id, const WriteEntry& entry, uint64_t new_version, bool as_backup)>;

// When Commit returns OK. kAsync: the writes are in the memory of all f+1 replicas (and reach their SSD
// logs later). kSync: they are also in the SSD log of every one of those replicas; until then the
// primaries keep the objects locked, so no other transaction reads a write that a whole-cluster power
// cut could still take back.
enum class Durability : uint8_t { kAsync = 1, kSync = 2 };

// The SSD log as sync durability needs it (logging/txn_hook.h: SyncLogFor). Both run on node threads.
struct SyncLog {
  // Appends a state (as InstallObserver is told of one) and returns its log position.
  std::function<uint64_t(const TxnId& id, const WriteEntry& entry, uint64_t new_version, bool as_backup)> append;
  // The last position on disk; an error if the log can no longer persist what it is given (a gap).
  std::function<absl::StatusOr<uint64_t>()> persisted;
};

struct TxnOptions {
  // f: backups per region (f+1 copies in memory). Every region's primary and backups are distinct nodes.
  int backups = 1;
  // How long a coordinator waits for LOCK and allocation replies before it gives up (Unavailable).
  absl::Duration rpc_timeout = absl::Seconds(5);
  // Truncation ids owed to a node go out on their own after this long without a record to ride on...
  absl::Duration truncate_delay = absl::Microseconds(500);
  // ...or as soon as this many are owed.
  size_t truncate_batch = 64;
  // How long a read retries an object that stays locked (or torn) before it gives up with Aborted.
  absl::Duration locked_read_timeout = absl::Milliseconds(100);
  // Optional: the SSD log's hook (see InstallObserver).
  InstallObserver on_install;
  // The default for transactions that do not choose (Transaction::SetDurability). kSync needs sync_log.
  Durability durability = Durability::kAsync;
  SyncLog sync_log;
  // kSync: how long Commit waits for every replica's log before it returns DeadlineExceeded (the
  // transaction then stays locked, and invisible, until its states are on disk everywhere)...
  absl::Duration sync_timeout = absl::Seconds(2);
  // ...and how often it asks the replicas how far their logs are.
  absl::Duration sync_poll_interval = absl::Microseconds(200);
  // Optional: fills this node's backup copies before any handler runs (restart from the SSD log).
  std::function<absl::Status(BackupStore&)> restore_backups;
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_TXN_OPTIONS_H_
