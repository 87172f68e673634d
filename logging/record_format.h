// The on-disk format of the SSD log (docs/formats/ssd-log.md), log format 2: segments (one RocksDB value
// per written batch, keyed by the first position it covers) that are folded, now and then, into one key
// per object holding the object's latest state; and a few metadata keys. Every value carries a format
// version and an XXH3-64 checksum over its key and itself, so a value that rots, is cut short, or is moved
// under another key is refused with an error naming the key and what is wrong.
#ifndef FATHOM_LOGGING_RECORD_FORMAT_H_
#define FATHOM_LOGGING_RECORD_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "platform/memory/global_address.h"

namespace fathom::logging {

// The layout of the whole database (m:format). 1 had object keys only; 2 added segments and m:folded; 3
// added log epochs (a state's log_epoch, m:closed).
inline constexpr uint64_t kLogFormat = 3;
// The format byte of object, metadata and segment values (2: states carry their log epoch).
inline constexpr uint8_t kRecordFormat = 2;
inline constexpr size_t kRecordHeaderBytes = 64;  // before the payload
inline constexpr size_t kChecksumBytes = 8;       // after it
inline constexpr size_t kMaxPayloadBytes = 1 << 20;

// Which copy of the object this node installed.
enum class Role : uint8_t { kPrimary = 1, kBackup = 2 };
const char* RoleName(Role role);

// One committed object state, as a primary installed it or a backup applied it.
struct ObjectState {
  memory::GlobalAddress address;
  uint32_t capacity = 0;  // slot bytes, header included
  uint32_t incarnation = 0;
  uint32_t flags = 0;     // object::kLiveFlag or 0 (a freed slot)
  uint64_t version = 0;
  std::string payload;
  Role role = Role::kPrimary;
  uint64_t position = 0;  // this node's log position (1, 2, ...), assigned when enqueued
  // The transaction that wrote it (txn::TxnId), for recovery and diagnosis.
  uint64_t txn_epoch = 0;
  uint32_t txn_node = 0;
  uint16_t txn_thread = 0;
  uint64_t txn_counter = 0;
  // The log epoch it committed in (txn/log_epochs.h); 0: the cluster ran no log epochs.
  uint64_t log_epoch = 0;

  bool live() const { return (flags & 1) != 0; }
};

// Object keys: 'o' and the address big-endian (so keys sort by region, then offset). 9 bytes.
std::string ObjectKey(memory::GlobalAddress address);
// Metadata keys start with 'm' (sorting before every object key).
inline constexpr char kNodeKey[] = "m:node";          // the node id the log belongs to
inline constexpr char kPositionKey[] = "m:position";  // the last persisted log position
inline constexpr char kGapKey[] = "m:gap";            // first position dropped (queue overflow)
inline constexpr char kFormatKey[] = "m:format";      // kLogFormat, written when the log is created
inline constexpr char kFoldedKey[] = "m:folded";      // object keys hold every state up to this position
inline constexpr char kClosedKey[] = "m:closed";      // the newest log epoch whose every state is on disk
inline constexpr char kMembersKey[] = "m:members";    // the data members of the configuration last applied

std::string EncodeState(const ObjectState& state);
// Validates everything: length, format version, checksum (over key and value), role, reserved bytes,
// flags, payload bounds, and that the key is an object key. The error names the key (address) and what is
// wrong; DataLoss for damage, FailedPrecondition for a format version this build does not read.
absl::StatusOr<ObjectState> DecodeState(std::string_view key, std::string_view value);

// Metadata values: format version, a little-endian u64, checksum over key and value. 17 bytes.
std::string EncodeMeta(std::string_view key, uint64_t value);
absl::StatusOr<uint64_t> DecodeMeta(std::string_view key, std::string_view value);

// The data members of a configuration (m:members): whose logs a restart with ZooKeeper membership must
// gather, since the configuration in ZooKeeper is rewritten as the nodes come back.
struct LoggedMembers {
  uint64_t configuration_epoch = 0;
  std::vector<uint32_t> ids;  // sorted, distinct, 1..65535, at least one
};
// Format version, 3 reserved bytes, count (u32), configuration epoch (u64), the ids (u32 each), checksum
// over key and value. DecodeMembers validates all of it (DataLoss, FailedPrecondition for a format).
std::string EncodeMembers(std::string_view key, const LoggedMembers& members);
absl::StatusOr<LoggedMembers> DecodeMembers(std::string_view key, std::string_view value);

// Segment keys: 's' and the first position the segment covers, big-endian (so they sort by position).
// 9 bytes, after every object key.
std::string SegmentKey(uint64_t first_position);

// A segment: the states of positions first..last that were written (a state older than one already
// written for its object is left out, and a dropped position has none), in position order.
struct Segment {
  uint64_t first = 0;
  uint64_t last = 0;
  std::vector<ObjectState> states;
};
inline constexpr size_t kSegmentHeaderBytes = 24;
inline constexpr size_t kSegmentEntryBytes = 72;  // before each state's payload

// Builds one segment value with no copy per state beyond its bytes.
class SegmentEncoder {
 public:
  explicit SegmentEncoder(uint64_t first_position);
  // REQUIRES: positions increase, each within [first, last] of Finish.
  void Add(const ObjectState& state);
  size_t states() const { return count_; }
  std::string Finish(uint64_t last_position);

 private:
  const uint64_t first_;
  std::string out_;
  uint32_t count_ = 0;
};

// Validates as DecodeState does, per state, plus: a segment key whose position matches the value's,
// first <= last, the state count, and each state's position within [first, last] and increasing.
absl::StatusOr<Segment> DecodeSegment(std::string_view key, std::string_view value);

// A key as people read it: "object r65536+0x40", "segment 1025" or "meta m:position" (hex for anything
// else).
std::string DescribeKey(std::string_view key);

}  // namespace fathom::logging

#endif  // FATHOM_LOGGING_RECORD_FORMAT_H_
