// The messages of transaction recovery (docs/recovery.md §5, docs/formats/txn-log.md): the configuration
// manager asks every data member what it holds of transactions whose coordinator is gone (ORPHANS), decides
// each, and tells the holders (RESOLVE). Decoding validates everything: the bytes come from the network.
#ifndef FATHOM_TXN_RECOVERY_RECORDS_H_
#define FATHOM_TXN_RECOVERY_RECORDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "platform/msg/handler_registry.h"
#include "txn/records.h"

namespace fathom::txn {

// RPC: OrphansRequest -> OrphansReply, CM thread i -> member thread i.
inline constexpr msg::MessageType kOrphansMessage = 110;
// RPC: ResolveRequest -> empty reply, CM thread i -> member thread i.
inline constexpr msg::MessageType kResolveMessage = 111;

inline constexpr uint8_t kRecoveryFormat = 2;
inline constexpr uint32_t kMaxHoldsPerReply = 1024;
inline constexpr uint32_t kMaxRegionsPerHold = 4096;

// What one node thread holds of one transaction.
enum class HoldKind : uint8_t {
  kLocked = 1,     // a primary's LOCK: objects locked, not installed
  kCommitted = 2,  // installed at a primary (COMMIT-PRIMARY), or a backup's record marked committed by recovery
  kRecord = 3,     // a backup's COMMIT-BACKUP record, undecided
  kAborted = 4,    // recovery aborted it here (a tombstone, until RESOLVE forget)
  kTruncated = 5,  // applied here at truncation and forgotten (a tombstone, until its coordinator's mark
                   // settles it or RESOLVE forget); the CM also derives it from marks (ThreadMark)
};
const char* HoldKindName(HoldKind kind);

struct Hold {
  TxnId id;
  HoldKind kind = HoldKind::kLocked;
  std::vector<uint32_t> regions;  // the regions its entries here write, sorted, distinct
  std::vector<uint32_t> written;  // every region the transaction writes (its record's), sorted, distinct
  friend bool operator==(const Hold& a, const Hold& b) {
    return a.id == b.id && a.kind == b.kind && a.regions == b.regions && a.written == b.written;
  }
};

// The latest mark (records.h) a member heard from a coordinator thread: every transaction of that thread
// it settles is decided — committed, or aborted with every ABORT written (so nothing of it is held).
struct ThreadMark {
  uint32_t node = 0;
  uint16_t thread = 0;
  CoordinatorMark mark;
  friend bool operator==(const ThreadMark& a, const ThreadMark& b) {
    return a.node == b.node && a.thread == b.thread && a.mark.incarnation == b.mark.incarnation &&
           a.mark.settled_below == b.mark.settled_below;
  }
};
inline constexpr uint32_t kMaxMarksPerReply = 4096;
inline constexpr size_t kMarkBytes = 24;

struct OrphansRequest {
  uint64_t epoch = 0;  // the configuration the manager decides in
};
std::string EncodeOrphansRequest(const OrphansRequest& request);
absl::StatusOr<OrphansRequest> DecodeOrphansRequest(std::string_view bytes);

struct OrphansReply {
  std::vector<ThreadMark> marks;  // of gone coordinators' threads
  std::vector<Hold> holds;  // in id order (epoch, node, thread, counter)
  bool more = false;  // the reply was full: ask again after resolving these
};
std::string EncodeOrphansReply(const OrphansReply& reply);
absl::StatusOr<OrphansReply> DecodeOrphansReply(std::string_view bytes);
// The encoded size of a hold (to fill a reply up to a ring message).
size_t HoldSize(const Hold& hold);
// A reply of `holds` in id order that encodes to at most `budget` bytes of holds (and at most
// kMaxHoldsPerReply): if they do not all fit, it is cut between two transactions and says `more`, so every
// hold up to its last id is in it. ResourceExhausted if one transaction's holds alone do not fit.
absl::StatusOr<OrphansReply> FillOrphansReply(std::vector<Hold> holds, size_t budget);

enum class ResolveAction : uint8_t {
  kCommit = 1,  // install at a primary that holds locks; mark a backup's record committed
  kAbort = 2,   // release a primary's locks, drop a backup's record; leave a tombstone
  kForget = 3,  // after every holder took the decision: apply (backups) and forget, or drop the tombstone
};

struct ResolveRequest {
  ResolveAction action = ResolveAction::kCommit;
  uint64_t epoch = 0;  // the configuration the manager decided in
  TxnId id;
};
std::string EncodeResolveRequest(const ResolveRequest& request);
absl::StatusOr<ResolveRequest> DecodeResolveRequest(std::string_view bytes);

}  // namespace fathom::txn

#endif  // FATHOM_TXN_RECOVERY_RECORDS_H_
