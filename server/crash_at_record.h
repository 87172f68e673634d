// fathomd --crash_at_record=KIND:N (tests only): while armed (each SIGUSR2 arms or disarms), the node kills
// itself with SIGKILL the Nth time its participant handled a transaction record of KIND
// (txn::TxnOptions::on_record), before it replies. So tests/faults can kill a primary or backup at a chosen
// step of a commit, after the load (arming is a signal: the load's records do not count), and try another
// node if this one sees no such records (it backs up no region being written).
#ifndef FATHOM_SERVER_CRASH_AT_RECORD_H_
#define FATHOM_SERVER_CRASH_AT_RECORD_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "txn/records.h"

namespace fathom::server {

struct CrashAtRecord {
  txn::RecordKind kind = txn::RecordKind::kLock;
  uint64_t count = 0;  // >= 1
};

// Parses "KIND:N", KIND one of lock, commit_backup, commit_primary, abort, truncate; InvalidArgument
// naming what is wrong.
absl::StatusOr<CrashAtRecord> ParseCrashAtRecord(std::string_view text);

// The on_record hook: while `armed` is set, counts the records of `crash.kind` (from any thread) and calls
// `kill` at the Nth. `armed` must outlive the hook.
std::function<void(txn::RecordKind)> CrashAtRecordHook(const CrashAtRecord& crash, const std::atomic<bool>* armed,
                                                       std::function<void()> kill);

}  // namespace fathom::server

#endif  // FATHOM_SERVER_CRASH_AT_RECORD_H_
