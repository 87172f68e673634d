// Fathom transactions: strictly serializable, replicated transactions over the cluster's shared objects,
// with FaRM's commit protocol (commit.h). The blocking API below is for application threads; code running
// on node threads uses the asynchronous TxnThread (txn_thread.h) through TransactionService::Post.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<txn::TransactionService> txns, txn::TransactionService::Attach(node));
//   // A transfer between two accounts (8-byte balances), retried on conflicts:
//   RETURN_IF_ERROR(txn::RunTransaction(*txns, [&](txn::Transaction& tx) -> absl::Status {
//     ASSIGN_OR_RETURN(std::string from_bytes, tx.Read(from));      // one-sided read, version recorded
//     ASSIGN_OR_RETURN(std::string to_bytes, tx.Read(to));
//     int64_t a = Decode(from_bytes), b = Decode(to_bytes);
//     if (a < amount) return absl::FailedPreconditionError("insufficient funds");  // not retried
//     RETURN_IF_ERROR(tx.Write(from, Encode(a - amount)));           // buffered until commit
//     RETURN_IF_ERROR(tx.Write(to, Encode(b + amount)));
//     return absl::OkStatus();                                       // RunTransaction commits
//   }));
//   // New objects, placed on a node or next to another object, exist once the transaction commits:
//   txn::Transaction tx = txns->Begin();
//   ASSIGN_OR_RETURN(object::ObjectRef account, tx.Alloc(8, {.node = 2}));
//   RETURN_IF_ERROR(tx.Write(account, Encode(100)));
//   RETURN_IF_ERROR(tx.Commit());   // OK, Aborted (conflict: retry), Unavailable, InvalidArgument
//
// Every region has a primary and TxnOptions::backups backups, as the node's region map says
// (platform/memory/region_map.h: the configuration's placement, or a static cluster's rule). Commit returns OK once the writes are in the memory of all f+1 replicas
// and at least one primary has been told to install them; with Durability::kSync (txn_options.h), also
// in the SSD log of all f+1 replicas.
#ifndef FATHOM_TXN_TXN_H_
#define FATHOM_TXN_TXN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "platform/node/node.h"
#include "platform/object/object_layout.h"
#include "txn/backup_store.h"
#include "txn/participant.h"
#include "txn/log_epochs.h"
#include "txn/outcome.h"
#include "txn/txn_options.h"
#include "txn/txn_thread.h"

namespace fathom::txn {

struct TxnStats {
  CoordinatorStats coordinator;  // summed over threads
  ParticipantStats participant;
  size_t log_entries = 0;         // records kept by participants, not yet truncated
  size_t truncations_owed = 0;    // ids coordinators still owe to replicas
  size_t reserved_slots = 0;
};

// Where Alloc puts a new object: on `node`, or (if set) on the node of `near`; else on the transaction's own.
struct AllocHint {
  uint32_t node = 0;
  const object::ObjectRef* near = nullptr;
};

class TransactionService;

// One transaction, run by one node thread on behalf of the calling (application) thread. Not thread-safe;
// never call it from a node thread. Destroying an unfinished transaction aborts it.
class Transaction {
 public:
  Transaction(Transaction&&) = default;
  Transaction& operator=(Transaction&&) = default;
  ~Transaction();

  // The object's payload (this transaction's own write if it wrote it). Read again, an object gives the
  // first read's payload, without a round trip (the commit finds whether it changed since). Aborted on a
  // conflict seen early (the object stayed locked); NotFound/FailedPrecondition for a stale reference
  // (the slot was freed or reused).
  absl::StatusOr<std::string> Read(const object::ObjectRef& ref);
  // Reads several objects at once (their one-sided reads are all in flight together): a snapshot of many
  // objects takes one round trip instead of one per object. The first error wins.
  absl::StatusOr<std::vector<std::string>> ReadMany(const std::vector<object::ObjectRef>& refs);
  // Buffers a new payload. InvalidArgument if it does not fit the object.
  absl::Status Write(const object::ObjectRef& ref, std::string_view bytes);
  // A new object with room for `payload_capacity` bytes; it exists for others once the transaction commits.
  absl::StatusOr<object::ObjectRef> Alloc(uint32_t payload_capacity, AllocHint hint = {});
  absl::Status Free(const object::ObjectRef& ref);
  // This transaction's durability (TxnOptions::durability unless set). Call before Commit.
  void SetDurability(Durability durability);
  // Runs the commit protocol. After Commit (whatever it returns) the transaction is finished. With
  // kSync, also DeadlineExceeded: committed, but its log epoch not on every member's disk within
  // TxnOptions::sync_timeout (it becomes durable when the logs catch up), or FailedPrecondition if the
  // layer runs no log epochs (no SSD log). The error of a commit that may have taken effect (outcome
  // unknown, or committed but not known durable) carries txn::MayHaveCommitted (outcome.h); any other
  // error took no effect.
  absl::Status Commit();
  void Abort();
  bool finished() const;

  // For the layers above (kv::Table's Get/Put/Delete in a Transaction): runs `start` on the transaction's
  // node thread with its state, where an asynchronous operation inside the transaction begins, and waits
  // for the result it hands to its callback: one hand-off to the node thread for a whole operation, its
  // reads included. Waits up to the layer's own call timeout plus `extra_wait`; DeadlineExceeded after,
  // and the transaction is aborted (an operation still running cannot add to a later commit).
  using InsideStart = absl::AnyInvocable<void(TxnThread&, std::shared_ptr<TxState>,
                                              std::function<void(absl::StatusOr<std::string>)>)>;
  absl::StatusOr<std::string> RunInside(InsideStart start, absl::Duration extra_wait = absl::ZeroDuration());

 private:
  friend class TransactionService;
  struct Shared;
  Transaction(std::shared_ptr<Shared> shared, int thread);
  template <typename T>
  absl::StatusOr<T> OnThread(absl::AnyInvocable<void(TxnThread&, std::function<void(absl::StatusOr<T>)>)> start,
                             absl::Duration extra_wait = absl::ZeroDuration());

  std::shared_ptr<Shared> shared_;
  int thread_ = 0;
  std::shared_ptr<TxState> state_;
};

class TransactionService {
 public:
  // Installs the transaction layer on every thread of `node` (handlers, truncation). Every node of the
  // cluster must attach before transactions run. It sets the node's region map to the static rule over
  // this node and its connected peers, epoch 1 (memory/region_map.h); a configuration replaces it
  // (node->region_directory().Set).
  static absl::StatusOr<std::unique_ptr<TransactionService>> Attach(node::Node* node, TxnOptions options = {});
  // The node's threads keep what they need; stop the node to tear the layer down.
  ~TransactionService();

  // A transaction on the next node thread (round robin), or on `thread`.
  Transaction Begin();
  Transaction Begin(int thread);
  // The thread Begin() would take next (round robin), for blocking calls of the layers above.
  int NextThread();
  // The transaction layer of node thread `thread` (use it on that thread only: Post, or its node
  // thread's StartAndWait). InvalidArgument for no such thread.
  absl::StatusOr<TxnThread*> Thread(int thread);

  // Lets the log epoch driver start (TxnOptions::start_log_epochs false). Harmless on other nodes.
  void StartLogEpochs();
  // Which member drives log epochs: `node` while it is a member (fathomd --zk: the configuration
  // manager), else the member with the smallest id (also when 0, the default).
  void SetLogEpochDriver(uint32_t node);
  // The node's log epochs; null if the layer runs none.
  const LogEpochs* log_epochs() const;
  // The node's region map (transaction ids carry its epoch; writes go to its primaries and backups).
  std::shared_ptr<const memory::RegionMap> replicas() const;
  // This node's copies of the regions it backs up.
  const BackupStore& backups() const;
  // Recovery (txn/promotion.cc, docs/recovery.md): serves every region the node's map names this node
  // primary of that it neither owns nor serves yet, once every peer connected to it and every one of
  // `members` (the configuration's other members, client-only ones too) announced on every thread that it
  // works from that map (node/config_applied.h; peers that connect later must work from it already:
  // Node::RaiseEpochFloor), and then no COMMIT-BACKUP record of it is pending here (each is truncated, so
  // applied to the copy, or aborted by its coordinator). A member not connected may owe this node records
  // its dropped connection discarded: it sends them on its new connection ahead of its announcement.
  // Returns the regions it serves from now on; the caller republishes to the members (Node::Republish) so
  // they import them. `waiting_for` (if set) gets what the regions still served by nobody wait for.
  // This node was removed while alive and joins again: every thread's participant lets go of what it held
  // (Participant::ForgetAfterRemoval). Returns how many transactions it let go.
  absl::StatusOr<size_t> ForgetParticipationAfterRemoval();
  absl::StatusOr<std::vector<uint32_t>> ServePromotedRegions(const std::vector<uint32_t>& members,
                                                             std::string* waiting_for = nullptr);
  // Makes the copy of every region the node's map names this node a backup of, if it has none yet (zeroed
  // registered memory): a promotion then finds its copy made, rather than spending ~35 ms per 64 MiB
  // copy while the region is unavailable.
  absl::Status PrepareBackupCopies();
  // Regions this node is primary of but does not serve yet (a promotion waiting for its records).
  std::vector<uint32_t> promotions_waiting() const;
  // Data recovery (txn/data_recovery.cc, docs/recovery.md): for every region this node serves as primary
  // whose map lists backups still filling, copies the region's objects to them (FILL records, applied by
  // version) once no transaction of an older configuration holds locks on the region here. Returns the
  // (region, backup) pairs copied; the caller marks them done in the configuration (FinishFilling).
  struct Filled {
    uint32_t region = 0;
    uint32_t backup = 0;
  };
  absl::StatusOr<std::vector<Filled>> FillBackups();
  // Whether a region this node is primary of lists a backup still filling.
  bool fills_waiting() const;
  // Transaction recovery (txn/recovery.h, docs/recovery.md §5): if this node is the configuration manager,
  // starts a round on every thread whose last round did not settle in its current configuration. Run by
  // the membership follower after each configuration and every retry while it says waiting.
  struct OrphanProgress {
    bool settled = true;  // every thread's last round settled in the current configuration (or not the CM)
    size_t committed = 0;  // decided by those rounds
    size_t aborted = 0;
    std::string error;  // a round's failure (it runs again)
  };
  absl::StatusOr<OrphanProgress> RecoverOrphans();
  // A digest of every replica this node holds (replica_digest.cc): the regions it serves as primary and its
  // backup copies, each object copied consistently. Replicas of one region agree once the cluster is quiet.
  struct ReplicaDigest {
    uint32_t region = 0;
    bool primary = false;
    uint64_t digest = 0;
    uint64_t objects = 0;
  };
  absl::StatusOr<std::vector<ReplicaDigest>> ReplicaDigests();
  // Counters summed over the threads (taken on each thread).
  absl::StatusOr<TxnStats> Stats();

  // Runs `task` on node thread `thread` with its transaction layer (the asynchronous API). Does not wait.
  absl::Status Post(int thread, absl::AnyInvocable<void(TxnThread&)> task);
  int threads() const;
  node::Node& node();

 private:
  explicit TransactionService(std::shared_ptr<Transaction::Shared> shared) : shared_(std::move(shared)) {}
  // `of` summed over the node's threads, each taken on its thread (recovery's checks of what they hold).
  absl::StatusOr<size_t> SumOverThreads(const std::function<size_t(TxnThread&)>& of);
  std::shared_ptr<Transaction::Shared> shared_;
};

struct RetryOptions {
  int max_attempts = 64;
  absl::Duration initial_backoff = absl::Microseconds(20);
  absl::Duration max_backoff = absl::Milliseconds(20);
  uint64_t seed = 1;  // jitter
  std::function<void(absl::Duration)> sleep;  // absl::SleepFor when empty
};

// Runs `body` in a new transaction and commits it, again (after a jittered, doubling backoff) whenever the
// body or the commit says Aborted, up to max_attempts (then Aborted). Any other error from the body aborts
// the transaction and is returned as is.
absl::Status RunTransaction(TransactionService& service, absl::FunctionRef<absl::Status(Transaction&)> body,
                            const RetryOptions& options = {});

}  // namespace fathom::txn

#endif  // FATHOM_TXN_TXN_H_
