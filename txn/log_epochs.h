// Log epochs: what makes a whole-cluster restart from the SSD logs consistent (docs/formats/log-epochs.md).
//
// Every node logs the states it installs on its own, so after a power cut each log has persisted a
// different prefix, and restoring the newest state of every object from all logs can bring back half of a
// transaction (a transfer's debit without its credit). Log epochs cut the logs consistently, as Silo's
// epochs do: every writing transaction commits in one epoch, which its replicas stamp on the states they
// log; a node appends an end-of-epoch marker once all its primary states of that epoch are in its log; and
// a restart restores only the epochs whose marker every node persisted.
//
// An epoch ends with a short pause that the driver (the member with the smallest id) runs
// (epoch_protocol.h):
//   1. CLOSE e: every node stops granting LOCKs (they are refused as Aborted, and retried) and answers
//      DRAINED once it holds no lock granted in e (each was installed by COMMIT-PRIMARY or undone by ABORT);
//   2. OPEN e+1, once every node drained: each node appends marker e to its log and grants locks in e+1;
//   3. a node whose log has marker p on disk says PERSISTED p; the driver tells everyone DURABLE d, the
//      smallest such p over the members: sync commits of epoch <= d return, logs may fold states <= d.
// A transaction's epoch is the one its primaries granted its locks in (the lock replies carry it); it is
// the same at every primary, since a node that drained grants nothing until every node drained. It
// rides to the backups in COMMIT-BACKUP, so every replica stamps the transaction's states with it, and
// coordinators need no part in the protocol (a client node that is not a member commits too).
// Why it is a consistent cut: a transaction of epoch e+1 installs only after every node drained e, so no
// lock of epoch e is granted after any write of epoch e+1 is visible; a transaction that read or
// overwrote a write of epoch > e locks its own writes later still, in an epoch > e. So restoring exactly
// the epochs <= e restores whole transactions and everything they read. Backups log their states later
// (at truncation) with the same stamp, and a primary's log alone holds every state of epoch <= e before
// its marker e.
#ifndef FATHOM_TXN_LOG_EPOCHS_H_
#define FATHOM_TXN_LOG_EPOCHS_H_

#include <atomic>
#include <cstdint>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace fathom::txn {

// How a participant refuses a LOCK while an epoch closes (Aborted, this message first): the coordinator
// unlocks what it holds and tries the LOCKs again a moment later, without the application seeing it.
inline constexpr char kEpochClosing[] = "log epoch closing";

// One node's view of the epochs; shared by its node threads. Thread-safe.
class LogEpochs {
 public:
  // `start_closed`: grant no lock until the driver tells this node the cluster's epoch (a node joining a
  // running cluster, whose own first epoch means nothing to the others).
  explicit LogEpochs(uint64_t first_epoch, bool start_closed = false)
      : current_(first_epoch), closing_(start_closed), closing_flag_(start_closed) {}

  // A participant grants a LOCK in the current epoch (true, `*epoch` set) unless it is closing (false:
  // refuse the LOCK). Released when COMMIT-PRIMARY installed it or ABORT undid it.
  bool TryLock(uint64_t* epoch);
  void Released(uint64_t epoch);

  // The protocol's steps on this node (epoch_protocol.cc).
  void Close();                                // no lock is granted any more
  bool Drained() const;                        // closing, and no lock of the current epoch held
  void Open(uint64_t next);                    // locks are granted in `next`
  bool HoldsNoLock() const;                    // no lock of any epoch is held
  // REQUIRES: closing() and HoldsNoLock(). A node that was behind the cluster (it joined, or missed an
  // OPEN) moves to `epoch`, still closing.
  void JumpTo(uint64_t epoch);
  uint64_t current() const;
  bool closing() const { return closing_flag_.load(std::memory_order_acquire); }  // no lock: polled

  // Whether this node drives the protocol if it is the driver (TransactionService::StartLogEpochs).
  void StartDriving() { driving_.store(true, std::memory_order_release); }
  bool driving() const { return driving_.load(std::memory_order_acquire); }
  // Who drives: `node` if it is a member, else the member with the smallest id (0: always the latter).
  // With ZooKeeper the configuration manager drives, so a newly joined node with a small id does not.
  void SetDriver(uint32_t node) { driver_.store(node, std::memory_order_release); }
  uint32_t driver_hint() const { return driver_.load(std::memory_order_acquire); }

  // A sync commit of `epoch` waits: the driver is asked to end it early (any thread; thread 0 sends it).
  void RequestClose(uint64_t epoch) {
    uint64_t seen = close_request_.load(std::memory_order_relaxed);
    while (epoch > seen && !close_request_.compare_exchange_weak(seen, epoch, std::memory_order_relaxed)) {
    }
  }
  uint64_t TakeCloseRequest() { return close_request_.exchange(0, std::memory_order_relaxed); }

  // The newest epoch whose marker every member's log has on disk (0: none yet).
  void SetDurable(uint64_t epoch);
  uint64_t durable() const { return durable_.load(std::memory_order_acquire); }

 private:
  mutable absl::Mutex mu_;
  uint64_t current_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  std::map<uint64_t, uint64_t> locks_ ABSL_GUARDED_BY(mu_);  // epoch -> locks granted, not yet released
  std::atomic<uint64_t> durable_{0};
  std::atomic<bool> driving_{false};
  std::atomic<uint32_t> driver_{0};
  std::atomic<bool> closing_flag_{false};  // closing_, readable without the mutex
  std::atomic<uint64_t> close_request_{0};
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_LOG_EPOCHS_H_
