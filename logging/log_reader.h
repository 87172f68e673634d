// Reading a node's SSD log back (restart, tools, tests). Every record is validated; any damage stops the
// read with an error naming the directory, the key (object address) and what is wrong: a restart never
// proceeds from a silently partial state.
//
//   ASSIGN_OR_RETURN(logging::LogContents log, logging::ReadLog("/data/node1"));
//   for (const logging::ObjectState& state : log.states) ...
#ifndef FATHOM_LOGGING_LOG_READER_H_
#define FATHOM_LOGGING_LOG_READER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "logging/record_format.h"

namespace rocksdb {
class DB;
class Env;
}  // namespace rocksdb

namespace fathom::logging {

struct LogContents {
  std::string dir;
  uint32_t node_id = 0;
  uint64_t position = 0;             // the last persisted position
  uint64_t closed_epoch = 0;         // the newest log epoch whose every state is in the log (m:closed)
  std::optional<LoggedMembers> members;  // m:members: absent in a log of a node that never recorded them
  // Every object's newest state, in address order. Where an object's states not yet folded span several
  // log epochs, the newest state of each earlier epoch (and the folded one) comes first, in version
  // order: a restart restores only the epochs every member closed (NewestStates).
  std::vector<ObjectState> states;
};

// Per object, the newest of `log`'s states whose log epoch is <= `cut` (in address order).
std::vector<ObjectState> NewestStates(const LogContents& log, uint64_t cut = UINT64_MAX);

// Opens the database read-only (RocksDB recovers its write-ahead log to the last complete batch, which
// carries its own position) and validates every key:
//   NotFound       no log in `dir`;
//   DataLoss       RocksDB reports corruption (a damaged or truncated file), a value fails its checksum
//                  or is cut short, a key is not a log key, a record's position is past the persisted one,
//                  the segments do not cover exactly the positions after m:folded up to m:position;
//   FailedPrecondition  a record or metadata of an unknown format version, a log of another log format
//                  (m:format), a gap (states were dropped), or a log of another node than `expected_node`
//                  (when non-zero).
absl::StatusOr<LogContents> ReadLog(const std::string& dir, uint32_t expected_node = 0, rocksdb::Env* env = nullptr);

// The log format check shared with ObjectLog::Open: OK for kLogFormat; FailedPrecondition otherwise
// (`format` absent: a log written before m:format existed, i.e. log format 1).
absl::Status CheckLogFormat(std::optional<uint64_t> format);

// Every segment of an open log, validated and in position order: they must cover exactly the positions
// folded+1..position (none if folded == position). Calls `apply` with each state. Errors (DataLoss, or
// FailedPrecondition for an unknown record format) name the segment, not the directory.
absl::Status ReadSegments(rocksdb::DB& db, uint64_t folded, uint64_t position,
                          const std::function<void(ObjectState&&)>& apply);

}  // namespace fathom::logging

#endif  // FATHOM_LOGGING_LOG_READER_H_
