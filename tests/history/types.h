// The data model of a list-append history: micro-ops, events (one per line of a history file) and
// transactions (an invoke paired with its completion). Format: docs/formats/history.md.
#ifndef FATHOM_TESTS_HISTORY_TYPES_H_
#define FATHOM_TESTS_HISTORY_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fathom::history {

enum class EventType { kInvoke, kOk, kFail, kInfo };

// "invoke", "ok", "fail", "info".
absl::string_view EventTypeName(EventType type);

// One step of a transaction: append `value` to the list at `key`, or read the list at `key`.
struct MicroOp {
  enum class Kind { kAppend, kRead };

  Kind kind = Kind::kRead;
  int64_t key = 0;
  int64_t value = 0;                           // kAppend: the element appended
  std::optional<std::vector<int64_t>> result;  // kRead: the list read; nullopt is JSON null (not known)

  static MicroOp Append(int64_t key, int64_t value) { return {Kind::kAppend, key, value, std::nullopt}; }
  static MicroOp Read(int64_t key, std::optional<std::vector<int64_t>> result = std::nullopt) {
    return {Kind::kRead, key, 0, std::move(result)};
  }
  bool operator==(const MicroOp&) const = default;
};

// One line of a history file.
struct Event {
  int64_t process = 0;
  EventType type = EventType::kInvoke;
  std::vector<MicroOp> ops;
  int64_t time = 0;  // nanoseconds; never decreases from one line to the next
  bool operator==(const Event&) const = default;
};

// A transaction: an invoke and the completion that follows it from the same process.
struct Txn {
  int id = 0;  // index in History::txns, in order of invocation
  int64_t process = 0;
  EventType outcome = EventType::kInfo;  // kOk, kFail or kInfo; an invoke never completed counts as kInfo
  std::vector<MicroOp> ops;              // kOk: the completion's (reads filled); otherwise the invoke's
  int invoke_line = 0;                   // 1-based line numbers; line order is the real-time order
  int complete_line = 0;                 // 0: the history ended before the completion
  int64_t invoke_time = 0;
  int64_t complete_time = -1;  // -1: no completion
};

struct History {
  std::vector<Txn> txns;
  int lines = 0;  // events parsed
};

// Elle's notation, for messages: [[:append 1 3] [:r 2 [1 2]] [:r 3 nil]]. At most `max_ops` micro-ops,
// then "...".
std::string FormatOps(const std::vector<MicroOp>& ops, int max_ops = 8);

// "T4 (process 2, ok, lines 7-9) [[:append 1 3]]", the way every report names a transaction.
std::string DescribeTxn(const Txn& txn);

}  // namespace fathom::history

#endif  // FATHOM_TESTS_HISTORY_TYPES_H_
