// Transaction recovery for transactions whose coordinator is gone (docs/recovery.md §5): a coordinator
// that died, or was removed from the configuration, leaves locks at primaries and records at backups that
// nothing else would ever release or apply.
//
// One decider: the configuration manager (CM). Each of its node threads runs rounds for the transactions
// of coordinator threads of its index (those records live in the members' threads of that index):
//   1. ORPHANS to every data member (its own participant directly): what do you hold of transactions
//      whose coordinator is gone? A member answers once it has fenced the CM's configuration — it
//      disconnected every node outside it, after handling what they wrote (msg::Messenger::RemovePeer), so
//      no record of theirs is still on the way — and only to the CM of its own configuration.
//   2. Decides each transaction from all the holds (recovery_decision.h).
//   3. RESOLVE commit or abort to every holder; once all took it, RESOLVE forget to every holder.
// Every step is idempotent and a decision leaves a trace at the holders (installed, marked committed, or
// an abort tombstone) until forget, so a round that fails part-way, or a new CM, decides the same again.
//
// Threading: one node thread; everything runs in its event loop.
#ifndef FATHOM_TXN_RECOVERY_H_
#define FATHOM_TXN_RECOVERY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "txn/recovery_decision.h"
#include "txn/recovery_records.h"

namespace fathom::txn {

class TxnThread;

struct RecoveryRoundResult {
  uint64_t epoch = 0;
  size_t found = 0;      // transactions whose coordinator is gone, held somewhere
  size_t committed = 0;  // of those, decided commit (by this round)
  size_t aborted = 0;
  bool settled = false;  // every member answered, every decision was taken everywhere, no holds left over
  std::string error;     // the first failure, if not settled
};

class OrphanRecovery {
 public:
  explicit OrphanRecovery(TxnThread& thread) : thread_(thread) {}

  // Starts a round for configuration `epoch` unless one is running.
  void Start(uint64_t epoch);
  bool running() const { return round_ != nullptr; }
  // The last round that finished (epoch 0: none yet).
  const RecoveryRoundResult& last() const { return last_; }

  // The member side: what this thread holds of transactions whose coordinator is gone, as an ORPHANS
  // reply from `from` for configuration `epoch` (checked as CheckAsked says).
  absl::StatusOr<OrphansReply> Holds(uint32_t from, uint64_t epoch);
  absl::Status Resolve(uint32_t from, const ResolveRequest& request);

 private:
  using Key = TxnKey;
  struct Round {
    uint64_t epoch = 0;
    size_t outstanding = 0;
    bool more = false;      // a member had more holds than one reply takes
    Key decide_through{};   // then: the largest id every member reported all its holds up to
    absl::Status error;
    std::map<Key, std::pair<TxnId, std::vector<Holder>>> found;
    std::vector<std::pair<uint32_t, ThreadMark>> marks;  // (member, a mark it heard from a gone coordinator)
    std::map<Key, Verdict> verdicts;
  };
  // Unavailable until this node fenced `epoch` (it may still hold records in flight); FailedPrecondition
  // for a configuration older than this node's, or a sender that is not its CM.
  absl::Status CheckAsked(uint32_t from, uint64_t epoch);
  bool Gone(const TxnId& id);
  void Gather(uint32_t node, absl::StatusOr<OrphansReply> reply);
  void Decide();
  // Sends `action` for every found transaction to every node that holds it; `then` once all replied.
  void ResolveAll(bool forget);
  void Resolved(absl::Status status, bool forget);
  void Finish();

  TxnThread& thread_;
  std::shared_ptr<Round> round_;
  RecoveryRoundResult last_;
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_RECOVERY_H_
