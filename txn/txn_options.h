// Options of the transaction layer.
#ifndef FATHOM_TXN_TXN_OPTIONS_H_
#define FATHOM_TXN_TXN_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "txn/records.h"

namespace fathom::txn {

class BackupStore;

// Told of every object state this node installs: as primary at COMMIT-PRIMARY (as_backup false, called
// while the object is still locked, so a primary's calls for one object come in version order) and as
// backup when truncation changes its copy (as_backup true; appliers on different threads may report one
// object out of order, the version tells). `log_epoch` is the transaction's (log_epochs.h; 0 without
// them). Runs on a node thread: it must only enqueue (logging/).
using InstallObserver = std::function<void(const TxnId& id, uint64_t log_epoch, const WriteEntry& entry,
                                           uint64_t new_version, bool as_backup)>;

// When Commit returns OK. kAsync: the writes are in the memory of all f+1 replicas (and reach their SSD
// logs later). kSync: also, the transaction's log epoch is durable: every member's SSD log has persisted
// every state of that epoch and of the epochs before it, so a whole-cluster restart brings it back
// (log_epochs.h). Others may read the writes before that (they are in the same epoch or a later one).
enum class Durability : uint8_t { kAsync = 1, kSync = 2 };

// The SSD log as log epochs need it (logging/txn_hook.h: EpochLogFor). Called on node thread 0.
struct EpochLog {
  // Appends the end-of-epoch marker for `epoch`, after every state appended so far.
  std::function<void(uint64_t epoch)> close;
  // The newest epoch whose marker is on disk; an error once the log can no longer persist (a gap).
  std::function<absl::StatusOr<uint64_t>()> persisted;
  // Every member's log has every epoch <= `epoch` on disk: the log may fold their states.
  std::function<void(uint64_t epoch)> durable;

  // For a client node (not a member, no log) whose transactions use Durability::kSync: it learns which
  // epoch is durable from the driver and logs nothing.
  static EpochLog ForClient() {
    return {[](uint64_t) {}, []() -> absl::StatusOr<uint64_t> { return 0; }, [](uint64_t) {}};
  }
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
  // A COMMIT-PRIMARY or ABORT that could not be written to a replica that is still a member is sent again
  // this often (its connection is made again meanwhile): until then the replica keeps locks.
  absl::Duration resend_interval = absl::Milliseconds(5);
  // Data recovery's pace (data_recovery.cc): bytes of FILL records a primary sends per second to the new
  // backups of its regions, all together, so the copy leaves the foreground most of the machine (FaRM
  // paces its copy the same way). 0: unpaced. fathomd --fill_rate sets it.
  uint64_t fill_bytes_per_second = 0;
  // How long a read retries an object that stays locked (or torn) before it gives up with Aborted.
  absl::Duration locked_read_timeout = absl::Milliseconds(100);
  // Optional: the SSD log's hook (see InstallObserver).
  InstallObserver on_install;
  // Log epochs (log_epochs.h), on when epoch_log.close is set. Every member must agree: all or none.
  EpochLog epoch_log;
  uint64_t first_log_epoch = 1;  // after a restart: the restored epoch + 1
  absl::Duration log_epoch_interval = absl::Milliseconds(10);
  // Whether the driver (the member with the smallest id) starts ending epochs at Attach. false: only after
  // TransactionService::StartLogEpochs, once every member is in the configuration (fathomd: members
  // join after Attach, and a node alone would drive epochs of its own).
  bool start_log_epochs = true;
  // Whether this node takes its first log epoch from the driver, granting no lock until then: a node
  // that joins a running cluster (fathomd --zk), whose first_log_epoch means nothing to the others.
  bool join_log_epochs = false;
  // The default for transactions that do not choose (Transaction::SetDurability). kSync needs log epochs.
  Durability durability = Durability::kAsync;
  // kSync: how long Commit waits for its epoch to be durable before it returns DeadlineExceeded (the
  // transaction is committed in memory then; it becomes durable when the logs catch up)...
  absl::Duration sync_timeout = absl::Seconds(2);
  // ...and how often it looks.
  absl::Duration sync_poll_interval = absl::Microseconds(200);
  // Optional (nodes with leases): whether this node held a lease that has lapsed. A commit, read-only ones
  // too, is then reported "outcome unknown" (Unavailable) instead of committed: the CM may have removed
  // this node, after which the members no longer read what it writes, recovery decides its transactions
  // (docs/recovery.md §5) and regions may have moved. Called on node threads; cheap and thread-safe.
  std::function<bool()> lease_lapsed;
  // Optional, with lease_lapsed: the lease's term (it grows when a lease is granted after the last one
  // lapsed) and the newest configuration the lease agent acts on. A commit that goes on in another term
  // than it began in sends its next record only once this node applied that configuration: a removal
  // and admission again it has yet to see shows there (the commit is recovery's then). Cheap and
  // thread-safe; the configuration is asked only when the term changed.
  std::function<uint64_t()> lease_term;
  std::function<uint64_t()> lease_configuration;
  // Optional: fills this node's backup copies before any handler runs (restart from the SSD log).
  std::function<absl::Status(BackupStore&)> restore_backups;
  // Tests only (fault points): called on the coordinator's thread as a commit reaches each named step,
  // before it acts: "lock", "validate", "commit_backup", "commit_primary", "truncate" (every primary
  // acknowledged), "truncate_withheld" (committed, but a primary did not take its COMMIT-PRIMARY), "abort". The replayable simulation stops a node there.
  std::function<void(std::string_view step)> on_step;
  // Tests only (fault points): called on a participant's thread once it handled a record of a transaction
  // (a LOCK granted, a COMMIT-BACKUP kept, a COMMIT-PRIMARY installed, an ABORT, a TRUNCATE), before any
  // reply goes. fathomd --crash_at_record kills the process there.
  std::function<void(RecordKind kind)> on_record;
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_TXN_OPTIONS_H_
