// ObjectLog: a node's asynchronous SSD log (DESIGN.md, logging). The transaction layer tells it every
// object state the node installs (txn_hook.h); Append only enqueues, and one writer thread of the log's
// own turns the queue into RocksDB writes (or, with ObjectLogOptions::executor, a task on the node's
// executor: the replayable simulation runs the log on its simulated disk that way).
//
// Each batch is written as one segment: a single RocksDB value holding its states back to back, so a
// state costs an encode into a buffer, not a RocksDB memtable insert of its own (that insert was most of
// the log's CPU). Every `fold_bytes` of segments, the writer folds them instead: it writes the latest state
// of every object they touched under one key per object and deletes them, in one atomic write. One key per
// object is the log's compaction (RocksDB drops the overwritten versions), and a freed object is kept as a
// state whose live flag is clear, so its slot's incarnation survives too. Only segments whose states are
// all of durable log epochs are folded (SetDurableEpoch; docs/formats/log-epochs.md): a restart may
// still drop newer epochs. Open folds what a crash left when it may (always with a cut).
//
//   ASSIGN_OR_RETURN(auto log, logging::ObjectLog::Open({.dir = "/data/node1", .node_id = 1}));
//   txn_options.on_install = logging::InstallObserverFor(log.get());   // txn_hook.h
//   ...
//   log->WaitForPersisted(absl::Seconds(5));   // lag 0: everything enqueued so far is on disk
//
// Positions: every appended state gets the next log position (1, 2, ...; continued across reopenings).
// Each write also writes the last position it covers (key m:position), atomically with its states, so
// the persisted position read back after a crash says exactly which appends survived.
//
// Errors: a failed write (disk full, I/O error) is counted and kept as status(); the writer retries the
// same batch with a growing backoff (asking RocksDB to Resume), the node goes on, and the lag grows. If
// the queue stays full (max_queued_records) longer than max_enqueue_wait, a state is dropped rather than
// stalling the commit path: the log then records a gap (m:gap) and reading it back fails, since it no
// longer covers the node's memory.
#ifndef FATHOM_LOGGING_OBJECT_LOG_H_
#define FATHOM_LOGGING_OBJECT_LOG_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "logging/record_format.h"
#include "platform/base/clock.h"
#include "platform/node/executor.h"

namespace rocksdb {
class DB;
class Env;
class Status;
class WriteBatch;
}  // namespace rocksdb

namespace fathom::logging {

struct ObjectLogOptions {
  std::string dir;       // the node's data directory (created if missing)
  uint32_t node_id = 0;  // recorded in the log; reopening with another id fails
  bool sync = false;     // fsync every batch (WriteOptions.sync); otherwise the OS flushes
  size_t max_batch_records = 1024;
  // Segments are folded into per-object keys once this many segment bytes are unfolded. Larger: fewer
  // folds (cheaper when objects are written often), more disk and memory (the writer keeps the latest
  // state of every object since the last fold) and a longer read at restart.
  size_t fold_bytes = 16 << 20;
  // The writer waits this long after the first queued state for more to join its batch (or until the
  // batch is full): one RocksDB write per millisecond instead of one per commit, at up to this much lag.
  absl::Duration batch_delay = absl::Milliseconds(1);
  size_t max_queued_records = 1 << 16;
  absl::Duration max_enqueue_wait = absl::Milliseconds(100);
  absl::Duration retry_backoff = absl::Milliseconds(1);  // doubles after each failed write...
  absl::Duration max_retry_backoff = absl::Milliseconds(500);
  const Clock* clock = Clock::Real();  // the lag in microseconds; with an executor, every wait too
  rocksdb::Env* env = nullptr;         // tests: a fault-injecting environment (outlives the log)
  // Runs the writer as a task (owned by node_id) instead of a thread of its own; the waits (the batch
  // window, the retry backoff, WaitForPersisted) are on `clock` then. Append never waits for room then:
  // the thread that would make it runs the appender too (a full queue drops, as after max_enqueue_wait).
  node::Executor* executor = nullptr;
  // After a whole-cluster restart that restored exactly the log epochs up to `cut`: Open drops every
  // state of a later epoch (it was not restored, and must never come back) and folds the rest, and the
  // log's closed epoch becomes `cut`.
  std::optional<uint64_t> cut;
};

struct ObjectLogStats {
  uint64_t enqueued = 0;            // states appended
  uint64_t persisted = 0;           // states written (superseded ones count: a newer state went instead)
  uint64_t superseded = 0;          // older than a state already written for the object (skipped)
  uint64_t dropped = 0;             // queue overflow (the log has a gap)
  uint64_t batches = 0;
  uint64_t folds = 0;               // segments folded into object keys
  uint64_t bytes = 0;               // value bytes written (segments and folded object states)
  uint64_t write_errors = 0;
  uint64_t enqueued_position = 0;   // the last position handed out
  uint64_t persisted_position = 0;  // the last position on disk
  uint64_t closed_epoch = 0;        // the newest log epoch whose marker is on disk
  uint64_t durable_epoch = 0;       // every member's log has closed it: its states may be folded
  uint64_t lag_records = 0;         // enqueued_position - persisted_position
  uint64_t lag_micros = 0;          // age of the oldest state not yet on disk (0 when none)
  absl::Status last_error;          // the last write error (OK once a write succeeds again)
  // As Stats counters: log.enqueued, log.persisted, ..., log.lag_micros, log.error (1 while failing).
  void AddTo(std::map<std::string, uint64_t>& counters) const;
};

class ObjectLog {
 public:
  // Opens (or creates) the log in options.dir and starts the writer. FailedPrecondition if it belongs to
  // another node or has a gap; the RocksDB error, naming the directory, if it cannot be opened.
  static absl::StatusOr<std::unique_ptr<ObjectLog>> Open(ObjectLogOptions options);
  // Stop(): writes what is queued (one attempt if writes are failing), then closes.
  ~ObjectLog();

  // Enqueues `state` (its position is assigned here) and returns at once unless the queue is full.
  // Returns the position. Thread-safe; called on node threads.
  uint64_t Append(ObjectState state);
  // The last position on disk; DataLoss once states were dropped (the log can no longer cover them).
  absl::StatusOr<uint64_t> PersistedPosition() const;
  // Log epochs (txn/log_epochs.h). The end of `epoch`: every state appended so far belongs to it or an
  // earlier one; the writer writes m:closed = epoch with (or after) the last of them.
  void CloseEpoch(uint64_t epoch);
  // The data members of the configuration this node runs in (fathomd --zk), written with the next batch
  // (m:members; a later call before that replaces it): a restart gathers these members' logs.
  void RecordMembers(LoggedMembers members);
  // The newest epoch closed on disk; DataLoss once states were dropped.
  absl::StatusOr<uint64_t> PersistedEpoch() const;
  // Every member's log has closed `epoch`: segments whose states are all of epochs <= it may be folded
  // (a restart never drops them). Until then they stay segments.
  void SetDurableEpoch(uint64_t epoch);
  // Waits until everything appended before the call is on disk; DeadlineExceeded (with the lag and last
  // write error) otherwise.
  absl::Status WaitForPersisted(absl::Duration timeout);
  ObjectLogStats Stats() const;
  // A function that reads this log's counters, safe to call after the log is gone (it then reports the
  // last values): for node::Node::AddCounterSource.
  std::function<void(std::map<std::string, uint64_t>&)> CounterSource() const;

  // Drains the queue (see the destructor) and closes the database. Idempotent.
  void Stop();
  // For crash tests: stops the writer without writing what is queued, as a killed process would.
  void Abandon();

  const std::string& dir() const { return options_.dir; }

 private:
  struct Core;
  struct Work;      // what one write takes from the queue
  struct Prepared;  // a write built from it, kept while it is retried
  ObjectLog(ObjectLogOptions options, std::unique_ptr<rocksdb::DB> db, uint64_t position, uint64_t closed_epoch);
  // A persisted counter, or DataLoss once states were dropped.
  absl::StatusOr<uint64_t> Persisted(uint64_t ObjectLogStats::*field) const;
  void StartWriter();
  void WriterLoop();
  // The executor's task: one write (or retry) when it is due; 1 if it wrote or tried, else 0.
  size_t WriterStep();
  // Takes the next write's work from the queue: up to a batch of states, the epoch markers they end,
  // the members. False if there is none. REQUIRES: core_->mu held.
  bool TakeWorkLocked(Work& work);
  // Builds the write of `work` (writer only): a segment of its states, with m:closed = its closes if
  // non-zero, and the fold of the foldable segments once there are fold_bytes of them.
  std::unique_ptr<Prepared> Prepare(Work& work);
  // One attempt at `prepared` (writer only); on success the counters move on. A failure is counted and
  // kept as the last error.
  bool WriteOnce(Prepared& prepared);
  // After a failed attempt: the next backoff, and Resume or a reopen (writer only).
  void BackOffAndReopen();
  // Gives up `prepared` (the log stopped while the disk failed): its segment is not on disk.
  void GiveUp(Prepared& prepared);
  // Retries `prepared` until it is written or the log stops (writer thread); false if it gave up.
  bool WriteWithRetries(Prepared& prepared);
  // At a clean stop: folds the segments of durable epochs (one try).
  void FoldAtStop();
  // Adds to `write_batch` the fold of the oldest unfolded segments whose states are all of durable epochs;
  // returns how many (0: none may be folded) and adds the value bytes to `bytes`.
  size_t AddFoldOfDurable(rocksdb::WriteBatch& write_batch, uint64_t& bytes);
  void DropFolded(size_t segments);
  // After a failed write (writer thread): Resume, or close and open again; db_ is null if that failed.
  rocksdb::Status Reopen();
  void Shutdown(bool drain);

  const ObjectLogOptions options_;
  std::unique_ptr<rocksdb::DB> db_;  // the writer's (and Open's, Shutdown's once it stopped)
  std::shared_ptr<Core> core_;  // shared with counter sources
  // Writer thread only: the newest version written per object (address, role), to skip stale appends
  // (backups apply on several threads and may report one object out of order).
  absl::flat_hash_map<uint64_t, uint64_t> written_versions_;
  // Writer thread only: the segments on disk not yet folded, oldest first, with their states.
  struct Unfolded {
    uint64_t last = 0;       // the last position it covers
    uint64_t max_epoch = 0;  // the newest log epoch of its states
    size_t bytes = 0;
    std::vector<ObjectState> states;
  };
  std::deque<Unfolded> unfolded_;
  size_t unfolded_bytes_ = 0;
  uint64_t segment_start_ = 0;  // the first position the next segment covers
  absl::Duration backoff_;
  absl::Status reopen_error_;            // why db_ is null: the last reopen failed (writer only)
  std::unique_ptr<Prepared> pending_;    // executor: the write being retried
  absl::Time retry_at_;                  // executor: when pending_ is tried again
  uint64_t task_ = 0;                    // executor: the writer's task
  std::thread writer_;
  bool stopped_ = false;  // Stop/Abandon's caller only
};

}  // namespace fathom::logging

#endif  // FATHOM_LOGGING_OBJECT_LOG_H_
