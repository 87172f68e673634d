// TxnThread: the transaction layer on one node thread. It coordinates the transactions that run on the
// thread (execution reads, allocation, the commit protocol: commit.h) and is a participant in other
// coordinators' commits (participant.h) through the handlers it registers on the thread's messenger.
//
// Everything here runs on the node thread; callbacks run there too (inside the thread's event loop). This
// is the asynchronous API the layers above use from node threads (the KV layer, benchmarks); txn.h wraps
// it in a blocking API for application threads.
#ifndef FATHOM_TXN_TXN_THREAD_H_
#define FATHOM_TXN_TXN_THREAD_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "platform/base/clock.h"
#include "platform/metrics/histogram.h"
#include "platform/node/node_thread.h"
#include "txn/abort_reason.h"
#include "txn/backup_store.h"
#include "txn/epoch_protocol.h"
#include "txn/log_epochs.h"
#include "txn/participant.h"
#include "txn/recovery.h"
#include "txn/spare_slots.h"
#include "platform/memory/region_map.h"
#include "txn/truncator.h"
#include "txn/tx_state.h"
#include "txn/txn_options.h"

namespace fathom::txn {

struct CoordinatorStats {
  uint64_t started = 0;
  uint64_t committed = 0;
  uint64_t read_only_committed = 0;
  // Transactions that did not commit, by why (execution reads that ended an attempt included).
  std::array<uint64_t, kAbortReasons> aborts{};
  void CountAbort(AbortReason reason) { ++aborts[static_cast<size_t>(reason)]; }
  uint64_t aborts_of(AbortReason reason) const { return aborts[static_cast<size_t>(reason)]; }
  // What commits cost. Messages count only those to other nodes (records for this node's own participant
  // are handed over directly); write_primaries counts every primary of written objects (FaRM's Pw).
  uint64_t write_primaries = 0;
  uint64_t lock_messages = 0;      // each answered by a reply
  uint64_t validate_reads = 0;     // one-sided (local ones included)
  uint64_t commit_backup_messages = 0;
  uint64_t commit_primary_messages = 0;
  uint64_t abort_messages = 0;
  uint64_t sync_waits = 0;         // sync commits that waited for their log epoch to be durable
  uint64_t epoch_retries = 0;      // LOCK rounds repeated because a log epoch was closing
  uint64_t truncate_messages = 0;  // TRUNCATE records of their own (the rest ride on other records)
  uint64_t alloc_messages = 0;     // ALLOC requests, each reserving a batch of spare slots (spare_slots.h)
  uint64_t resends = 0;            // COMMIT-PRIMARY and ABORT records sent again after a failed write
  uint64_t redeliveries = 0;       // records written, then lost with their connection, sent again
  uint64_t lease_waits = 0;        // commit steps held back a resend_interval for the lease (WhenLeased)
  uint64_t execution_reads = 0;  // one-sided (remote) object reads in execution
  uint64_t local_reads = 0;
  uint64_t local_read_retries = 0;  // copies of local objects found locked or torn
  uint64_t repeated_reads = 0;      // reads of an object the transaction had read: answered from that read
  // Start to OK of read-write commits (sync ones until durable).
  metrics::LatencyHistogram commit_latency;
  // Post to completion of execution reads of remote objects (one-sided: ring-free; over tcp a message).
  metrics::LatencyHistogram remote_read_latency;

  CoordinatorStats& operator+=(const CoordinatorStats& o) {
    started += o.started;
    committed += o.committed;
    read_only_committed += o.read_only_committed;
    for (size_t r = 0; r < kAbortReasons; ++r) aborts[r] += o.aborts[r];
    write_primaries += o.write_primaries;
    lock_messages += o.lock_messages;
    validate_reads += o.validate_reads;
    commit_backup_messages += o.commit_backup_messages;
    commit_primary_messages += o.commit_primary_messages;
    abort_messages += o.abort_messages;
    sync_waits += o.sync_waits;
    epoch_retries += o.epoch_retries;
    truncate_messages += o.truncate_messages;
    alloc_messages += o.alloc_messages;
    resends += o.resends;
    redeliveries += o.redeliveries;
    lease_waits += o.lease_waits;
    execution_reads += o.execution_reads;
    local_reads += o.local_reads;
    local_read_retries += o.local_read_retries;
    repeated_reads += o.repeated_reads;
    commit_latency += o.commit_latency;
    remote_read_latency += o.remote_read_latency;
    return *this;
  }
};

using ReadCallback = std::function<void(absl::StatusOr<std::string>)>;
using RefCallback = std::function<void(absl::StatusOr<object::ObjectRef>)>;
using DoneCallback = std::function<void(absl::Status)>;

class TxnThread {
 public:
  // `epochs`: the node's log epochs, shared by its threads (null: the cluster runs none).
  TxnThread(node::NodeThread* thread, uint32_t node_id, BackupStore* backups,
            LogEpochs* epochs, const TxnOptions& options, const Clock* clock);
  ~TxnThread();

  // Registers the participant's handlers and the truncation poller on the thread. Call once, on it.
  absl::Status Install();

  std::shared_ptr<TxState> Begin();
  // Execution. Reads see the transaction's own writes; objects are read with one-sided reads (local ones
  // with the same check), and the version read joins the read set. An object read again is answered
  // from the first read's payload (the same snapshot, no round trip).
  void Read(TxState& tx, const object::ObjectRef& ref, ReadCallback done);
  // A checked copy of an object read elsewhere (the owner's answer to kv's fetch at the owner,
  // kv/fetch_at_owner.h) joins the read set as if this transaction had read it: a Read of it is then
  // answered from it. Aborted if the transaction read another version before; nothing for an object it
  // wrote (its reads see the write); FailedPrecondition if finished; InvalidArgument for a bad reference.
  absl::Status AddRead(TxState& tx, const object::ObjectRef& ref, uint64_t version, std::span<const std::byte> payload);
  // Several reads in flight together (one round trip for the lot); the values in `refs` order, or the
  // first error.
  void ReadMany(std::shared_ptr<TxState> tx, const std::vector<object::ObjectRef>& refs,
                std::function<void(absl::StatusOr<std::vector<std::string>>)> done);
  absl::Status Write(TxState& tx, const object::ObjectRef& ref, std::string_view bytes);
  // A new object of `payload_capacity` bytes on `node` (0: this node), live once the transaction commits.
  // Unavailable if that node serves none of its own regions (recovery gave them to others).
  void Alloc(std::shared_ptr<TxState> tx, uint32_t payload_capacity, uint32_t node, RefCallback done);
  // The node that serves `ref`'s region (its primary), where an object "near" it is allocated; its owner
  // if the region is in no placement.
  uint32_t NodeServing(const object::ObjectRef& ref);
  absl::Status Free(TxState& tx, const object::ObjectRef& ref);
  // The commit protocol (commit.h). OK, Aborted (conflict: retry), Unavailable (a replica is unreachable
  // or the outcome is unknown), InvalidArgument; for Durability::kSync also FailedPrecondition (no log
  // epochs) and DeadlineExceeded (committed, but its log epoch not durable within sync_timeout). While a
  // log epoch closes, primaries refuse locks; the commit locks again itself (epoch_retries). An error of
  // a commit that may have taken effect carries txn::MayHaveCommitted (outcome.h).
  void Commit(std::shared_ptr<TxState> tx, DoneCallback done);
  // Gives back what the transaction reserved; no messages to primaries are needed (nothing is locked).
  void Abort(TxState& tx);
  // Gives back the slots `tx` reserved (after an abort).
  void ReleaseReservations(TxState& tx);

  // For the commit protocol.
  node::NodeThread& thread() { return *thread_; }
  msg::Messenger& messenger() { return thread_->messenger(); }
  Participant& participant() { return participant_; }
  Truncator& truncator() { return truncator_; }
  // Transaction recovery of coordinators that are gone (recovery.h): the decider when this node is the
  // configuration manager, and the member side always.
  OrphanRecovery& recovery() { return recovery_; }
  LogEpochs* log_epochs() { return epochs_; }
  // Who holds each region, as of the node's latest configuration (memory/region_map.h).
  const memory::RegionMap& replicas();
  // Whether the incarnation of `coordinator` that worked in configuration `epoch` is gone by this node's
  // map (removed, or admitted again since: RegionMap::CoordinatorGone), an epoch this node has reached.
  // Its transactions are recovery's then (a record of one is refused), and so are the slots reserved for
  // it (freed; no more are reserved).
  bool CoordinatorGoneAt(uint32_t coordinator, uint64_t epoch);
  // Whether this node was admitted again (removed while alive, then joined) after configuration `epoch`:
  // its transactions of that epoch are recovery's, never its own to finish.
  bool AdmittedAgainSince(uint64_t epoch) { return replicas().JoinedEpoch(node_id_) > epoch; }
  const TxnOptions& options() const { return options_; }
  const Clock& clock() const { return *clock_; }
  uint32_t node_id() const { return node_id_; }
  uint16_t index() const { return static_cast<uint16_t>(thread_->index()); }
  // A new transaction id; the transaction is unsettled until Settle(counter).
  TxnId NextId();
  // The transaction of `counter` is decided and needs nothing from recovery any more: committed (every
  // backup holds its record), or aborted with every ABORT written (records.h CoordinatorMark).
  void Settle(uint64_t counter);
  // This node was removed while alive (Participant::ForgetAfterRemoval): its transactions so far are
  // recovery's. Its marks start a new incarnation with the next transaction, so none of them settles an
  // earlier one, and those still in flight never settle (their records are refused by the members).
  // Returns how many transactions its participant let go.
  size_t ForgetAfterRemoval();
  // What every record of this thread says about its settled transactions.
  CoordinatorMark mark() const {
    return {incarnation_, unsettled_.empty() ? next_counter_ : *unsettled_.begin()};
  }
  CoordinatorStats& stats() { return stats_; }
  // Runs `task` on this thread once `delay` has passed (checked by a poller: not before, maybe later).
  void After(absl::Duration delay, std::function<void()> task);
  // Sends `message` to `node` until the fabric has written it into the node's memory: a send or write that
  // fails is tried again every resend_interval while `node` is a member of this node's configuration, and
  // at once when a new connection to `node` is made, ahead of this thread's CONFIG-APPLIED on it (Owe).
  // `done(true)` once written, `done(false)` once `node` has left (recovery's business then) or, if it is
  // not written by then, at `give_up`. `if_lost` (if set) runs if a copy was written but its connection was
  // dropped before `node` consumed it (msg::SendOptions::on_lost): done has run then. `still_wanted` (if
  // set) is asked before every try: false ends it as `node` leaving does.
  void SendUntilWritten(uint32_t node, msg::MessageType type, std::string message, std::function<void(bool)> done,
                        absl::Time give_up = absl::InfiniteFuture(), std::function<void()> if_lost = nullptr,
                        std::function<bool()> still_wanted = nullptr);
  // What a record that must arrive does when it is lost after it was written: it goes to `node` again as
  // `type` (SendUntilWritten; again if that copy is lost too), and once the copy is written `node` is owed
  // the truncation of `truncate` (if set) again, behind it: a copy must not arrive after the truncation
  // that was to forget it (it would stay for good). Only for records that are harmless twice (ABORT,
  // COMMIT-PRIMARY as kCommitPrimaryAgainMessage, a committed transaction's COMMIT-BACKUP).
  std::function<void()> Redeliver(uint32_t node, msg::MessageType type, std::string message,
                                  std::optional<TxnId> truncate = std::nullopt);

 private:
  // `send` is owed to `node`: it runs after resend_interval, or sooner if a connection to `node` is made
  // first (SendOwed). A promoted backup takes a peer's CONFIG-APPLIED on a new connection as a sign that
  // every record planned under an older map was handled (node/config_applied.h): a record that was lost
  // with the old connection must be ahead of it.
  void Owe(uint32_t node, std::function<void()> send);
  // Sends what is owed to `node`, in the order it was owed (NodeThread::AddConnectionListener).
  void SendOwed(uint32_t node);
  // The participant's handlers.
  absl::Status OnRecord(const msg::Message& message, std::string* reply);
  // A validated record, handled by the participant (`type`: the message type it came as).
  absl::Status HandleRecord(msg::MessageType type, Record record, std::string* reply);
  absl::Status OnAlloc(const msg::Message& message, std::string* reply);
  // Data recovery: object states of a region this node is a filling backup of (data_recovery.cc).
  absl::Status OnFill(const msg::Message& message, std::string* reply);
  absl::Status OnRelease(const msg::Message& message);
  // Transaction recovery's requests (recovery.h).
  absl::Status OnOrphans(const msg::Message& message, std::string* reply);
  absl::Status OnResolve(const msg::Message& message, std::string* reply);
  uint64_t RegionBytes(uint32_t region);
  // A slot reserved in this node's memory for `coordinator` (at configuration `epoch`), in a region this
  // node is still the primary of.
  absl::StatusOr<object::ObjectRef> ReserveHere(uint32_t payload_capacity, uint32_t coordinator, uint64_t epoch);
  // Sends ALLOC to `node` for spare slots of `size_class`, for the transactions waiting for one.
  void AskForSpares(uint32_t node, int size_class);
  // Drops the spare slots kept for this node as a coordinator once it was admitted again (or removed):
  // their owners freed them when it left (issue 58, path 6: a driver paused past its lease failed its
  // next updates with "allocates ..., which it did not reserve").
  void DropSparesOfEarlierMembership();
  // Frees the slots reserved here for coordinators that are gone, once this node has handled everything
  // they wrote (the poller; runs when the configuration moved, and again while LOCKs keep some).
  size_t ReleaseSlotsOfGoneCoordinators();
  void ReadLocal(TxState& tx, const object::ObjectRef& ref, ReadCallback done);
  void ReadLocalAttempt(TxState& tx, const object::ObjectRef& ref, ReadCallback done, absl::Time give_up);
  void ReleaseReserved(const object::ObjectRef& ref);
  // Records the version read and keeps the payload (returned, for the reader); Aborted if the transaction
  // read another version of the object before.
  absl::StatusOr<const std::string*> NoteRead(TxState& tx, const object::ObjectRef& ref, uint64_t version,
                                       std::span<const std::byte> payload);

  node::NodeThread* thread_;
  const uint32_t node_id_;
  const TxnOptions options_;
  const Clock* clock_;
  Participant participant_;
  Truncator truncator_;
  OrphanRecovery recovery_{*this};
  uint64_t next_counter_ = 1;
  // The configuration epoch of this thread's first transaction since it started or was last removed
  // (CoordinatorMark).
  uint64_t incarnation_ = 0;
  absl::btree_set<uint64_t> unsettled_;  // counters of transactions not settled yet
  CoordinatorStats stats_;
  std::vector<std::byte> local_buffer_;
  SpareSlots spares_;
  uint64_t spares_joined_epoch_ = 0;  // this node's JoinedEpoch when the kept spares were asked for
  uint64_t reservations_checked_epoch_ = 0;
  bool recheck_reservations_ = false;  // set a second after a pass left slots that held LOCKs allocate
  std::vector<std::pair<absl::Time, std::function<void()>>> timers_;
  // Sends waiting for a connection to a node (Owe), by ticket: in the order they were owed.
  absl::flat_hash_map<uint32_t, std::map<uint64_t, std::function<void()>>> owed_;
  uint64_t next_owed_ticket_ = 0;
  LogEpochs* const epochs_;
  std::unique_ptr<EpochProtocol> protocol_;  // thread 0 only
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_TXN_THREAD_H_
