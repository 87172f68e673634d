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
inline constexpr msg::MessageType kPersistMessage = 107;       // RPC: a kPersist record -> PersistReply

inline constexpr uint8_t kRecordFormat = 1;
// Bounds a decoder enforces (a record fits in one ring message anyway; these catch lies early).
inline constexpr uint32_t kMaxEntriesPerRecord = 4096;
inline constexpr uint32_t kMaxTruncatedPerRecord = 4096;

enum class RecordKind : uint8_t {
  kLock = 1,
  kCommitBackup = 2,
  kCommitPrimary = 3,
  kAbort = 4,
  kTruncate = 5,
  kPersist = 6,  // sync durability: log the transaction's states on this replica now (no entries)
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

struct Record {
  RecordKind kind = RecordKind::kLock;
  TxnId id;
  // Counters of earlier transactions of the same coordinator thread that are truncated (piggybacked).
  std::vector<uint64_t> truncated;
  std::vector<WriteEntry> entries;  // kLock and kCommitBackup only
};

// The encoded size of a record with these parts (for setting ring room aside before it is built).
size_t RecordSize(size_t truncated, std::span<const WriteEntry* const> entries = {});
std::string EncodeRecord(const Record& record);
// The same encoding from parts kept elsewhere (the commit protocol encodes its entries without copying them).
std::string EncodeRecord(RecordKind kind, const TxnId& id, const std::vector<uint64_t>& truncated,
                         std::span<const WriteEntry* const> entries);
// InvalidArgument, naming the field, for anything malformed.
absl::StatusOr<Record> DecodeRecord(std::string_view bytes);

// The reply to a lock record: the version each entry was locked at, in entry order.
std::string EncodeLockReply(const std::vector<uint64_t>& versions);
absl::StatusOr<std::vector<uint64_t>> DecodeLockReply(std::string_view bytes, size_t expected_entries);

// The reply to a kPersist record: the replica's log position of the transaction's last state there, and
// the replica's last persisted position (the states are on disk once persisted >= position).
struct PersistReply {
  uint64_t position = 0;
  uint64_t persisted = 0;
};
std::string EncodePersistReply(const PersistReply& reply);
// DataLoss for a wrong length or position 0.
absl::StatusOr<PersistReply> DecodePersistReply(std::string_view bytes);

// kAlloc: reserve a slot with room for `payload_capacity` bytes on the receiving node.
std::string EncodeAllocRequest(uint32_t payload_capacity);
absl::StatusOr<uint32_t> DecodeAllocRequest(std::string_view bytes);
// The reply and the kRelease message carry a slot reference.
std::string EncodeRef(const object::ObjectRef& ref);
absl::StatusOr<object::ObjectRef> DecodeRef(std::string_view bytes);

}  // namespace fathom::txn

#endif  // FATHOM_TXN_RECORDS_H_
