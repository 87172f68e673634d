// The transaction log records of the commit protocol (docs/formats/txn-log.md), and their codec.
//
// A coordinator writes these into the rings of the primaries and backups of the objects it writes (FaRM's
// transaction logs are such rings; ours are the msg layer's, one per sending thread and receiving node).
// Every record carries the transaction id, which includes the configuration epoch, so recovery can tell
// which configuration wrote it. Decoding validates everything: the bytes come from the network.
#ifndef FATHOM_TXN_RECORDS_H_
#define FATHOM_TXN_RECORDS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "platform/msg/handler_registry.h"
#include "platform/object/object_layout.h"

namespace fathom::txn {

// Message types of the transaction layer (the runtime keeps 1..99).
inline constexpr msg::MessageType kLockMessage = 100;          // RPC: a kLock record -> LockReply
inline constexpr msg::MessageType kCommitBackupMessage = 101;  // one-way: a kCommitBackup record
inline constexpr msg::MessageType kCommitPrimaryMessage = 102; // one-way: a kCommitPrimary record
inline constexpr msg::MessageType kAbortMessage = 103;         // one-way: a kAbort record
inline constexpr msg::MessageType kTruncateMessage = 104;      // one-way: a kTruncate record
inline constexpr msg::MessageType kAllocMessage = 105;         // RPC: AllocRequest -> AllocReply
inline constexpr msg::MessageType kReleaseMessage = 106;       // one-way: a slot reserved by kAlloc, unused
// 107 was PERSIST (sync durability before log epochs); retired, never reused.
inline constexpr msg::MessageType kLogEpochMessage = 108;      // one-way: the log epoch protocol (log_epochs.h)
// RPC: data recovery (data_recovery.cc): a kCommitBackup-shaped record of object states a primary copies
// to a new backup of its region; the reply is empty.
inline constexpr msg::MessageType kFillMessage = 109;
// 110, 111: transaction recovery (recovery_records.h).
// One-way: a kCommitPrimary record sent again because the connection its first copy went over was dropped
// before the primary consumed it (msg::SendOptions::on_lost). The primary may have handled the first copy:
// one for a transaction it holds no locks of is a duplicate, counted and ignored, where a plain
// COMMIT-PRIMARY would be refused.
inline constexpr msg::MessageType kCommitPrimaryAgainMessage = 112;

inline constexpr uint8_t kRecordFormat = 3;
// Bounds a decoder enforces (a record fits in one ring message anyway; these catch lies early).
inline constexpr uint32_t kMaxEntriesPerRecord = 4096;
inline constexpr uint32_t kMaxTruncatedPerRecord = 4096;
inline constexpr uint32_t kMaxRegionsPerRecord = 4096;

enum class RecordKind : uint8_t {
  kLock = 1,
  kCommitBackup = 2,
  kCommitPrimary = 3,
  kAbort = 4,
  kTruncate = 5,
};
enum class WriteOp : uint8_t { kWrite = 1, kAlloc = 2, kFree = 3 };
const char* WriteOpName(WriteOp op);

// ⟨configuration epoch, node, thread, counter⟩: unique across the cluster's life.
struct TxnId {
  uint64_t epoch = 0;
  uint32_t node = 0;
  uint16_t thread = 0;
  uint64_t counter = 0;
  friend bool operator==(const TxnId& a, const TxnId& b) {
    return a.epoch == b.epoch && a.node == b.node && a.thread == b.thread && a.counter == b.counter;
  }
  std::string ToString() const;
};
// The whole id as one key that orders and hashes: (epoch, node, thread, counter). A coordinator's counters
// restart with its process, which then runs in a later configuration, so no part alone names a transaction.
using TxnKey = std::tuple<uint64_t, uint32_t, uint16_t, uint64_t>;
inline TxnKey KeyOf(const TxnId& id) { return {id.epoch, id.node, id.thread, id.counter}; }

// One written object. In a lock record `version` is the version the coordinator read (checked if
// check_version) and `payload` the new value; in a commit-backup record `version` is the new version.
struct WriteEntry {
  object::ObjectRef ref;
  WriteOp op = WriteOp::kWrite;
  bool check_version = false;
  uint64_t version = 0;
  std::string payload;

  // The object state the entry installs.
  uint32_t new_incarnation() const { return op == WriteOp::kFree ? ref.incarnation + 1 : ref.incarnation; }
  uint32_t new_flags() const { return op == WriteOp::kFree ? 0 : object::kLiveFlag; }
};

// What a coordinator thread says with every record about its transactions, for recovery after it is gone
// (docs/recovery.md §5): every transaction of its process with a counter below `settled_below` is decided
// and needs nothing more from recovery — committed (every backup holds its record), or aborted with every
// ABORT written. `incarnation` is the configuration epoch of the thread's first transaction in this
// process, or since the process was last removed while alive (TxnThread::ForgetAfterRemoval): counters
// restart with the process, and what a removed process settles after its removal is not recovery's to
// believe, so the mark speaks only for ids of epoch >= incarnation. Both 0: no mark (a FILL record, a
// coordinator that ran no transaction).
struct CoordinatorMark {
  uint64_t incarnation = 0;
  uint64_t settled_below = 0;
  // Whether `id` (of this mark's node and thread) is settled by it.
  bool Settles(const TxnId& id) const;
};

// Whether `id` is settled by the marks its coordinator thread sent, one per incarnation, sorted by
// incarnation: by the one of the newest incarnation not after the id's epoch (each speaks for its own
// incarnation's ids only; a newer one does not replace it for the older ids).
bool SettledBy(std::span<const CoordinatorMark> marks, const TxnId& id);

struct Record {
  RecordKind kind = RecordKind::kLock;
  TxnId id;
  // COMMIT-BACKUP: the log epoch the transaction commits in (the primaries granted its locks in it,
  // log_epochs.h); the backups stamp the states they log with it. 0 in other records, and in a cluster
  // that runs no log epochs.
  uint64_t log_epoch = 0;
  CoordinatorMark mark;
  // Counters of earlier transactions of the same coordinator thread that are truncated (piggybacked).
  std::vector<uint64_t> truncated;
  // kLock and kCommitBackup: every region the transaction writes, sorted, distinct — not only those of
  // this record's entries. Recovery needs the whole set from any one record: a region whose replicas all
  // lost the transaction (a dead primary, a backup never written) must still count (recovery_decision.h).
  std::vector<uint32_t> written_regions;
  std::vector<WriteEntry> entries;  // kLock and kCommitBackup only
};
// The sorted, distinct regions of `entries`.
std::vector<uint32_t> RegionsOf(std::span<const WriteEntry> entries);

// The encoded size of a record with these parts (for setting ring room aside before it is built).
size_t RecordSize(size_t truncated, std::span<const WriteEntry* const> entries = {}, size_t written_regions = 0);
std::string EncodeRecord(const Record& record);
// The same encoding from parts kept elsewhere (the commit protocol encodes its entries without copying them).
std::string EncodeRecord(RecordKind kind, const TxnId& id, const CoordinatorMark& mark, uint64_t log_epoch,
                         const std::vector<uint64_t>& truncated, std::span<const uint32_t> written_regions,
                         std::span<const WriteEntry* const> entries);
// InvalidArgument, naming the field, for anything malformed.
absl::StatusOr<Record> DecodeRecord(std::string_view bytes);

// The reply to a lock record: the version each entry was locked at, in entry order, and the log epoch the
// primary granted the locks in (0: it runs no log epochs).
struct LockGrant {
  std::vector<uint64_t> versions;
  uint64_t log_epoch = 0;
};
std::string EncodeLockReply(const LockGrant& grant);
absl::StatusOr<LockGrant> DecodeLockReply(std::string_view bytes, size_t expected_entries);

// kAlloc: reserve `count` slots with room for `payload_capacity` bytes each on the receiving node, for the
// sending coordinator, which was at configuration `epoch` (the owner frees them once that coordinator is
// gone, as transaction recovery judges it: RegionMap::CoordinatorGone).
inline constexpr uint32_t kMaxAllocCount = 32;
struct AllocRequest {
  uint32_t payload_capacity = 0;
  uint32_t count = 1;
  uint64_t epoch = 0;
};
std::string EncodeAllocRequest(const AllocRequest& request);
absl::StatusOr<AllocRequest> DecodeAllocRequest(std::string_view bytes);
// The reply: 1..`requested` slots (fewer when the owner's memory ran out part-way), each with room for
// `payload_capacity` bytes.
std::string EncodeAllocReply(const std::vector<object::ObjectRef>& refs);
absl::StatusOr<std::vector<object::ObjectRef>> DecodeAllocReply(std::string_view bytes, uint32_t requested,
                                                                uint32_t payload_capacity);
// The kRelease message carries a slot reference.
std::string EncodeRef(const object::ObjectRef& ref);
absl::StatusOr<object::ObjectRef> DecodeRef(std::string_view bytes);

}  // namespace fathom::txn

#endif  // FATHOM_TXN_RECORDS_H_
