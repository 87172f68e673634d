// A small strict JSON reader for one line of a history file (RFC 8259 grammar, nothing more): no
// comments, no trailing commas, no NaN, no single quotes, no duplicate object keys, ASCII input only.
// Internal to //tests/history; the schema is checked by parse.cc on top of it.
//
// Why not protobuf's Struct: it misbehaves under our TSan build (see tools/fathomctl/json_test_util.h),
// and it cannot tell "1" from "1.0" or keep the column of a bad token.
#ifndef FATHOM_TESTS_HISTORY_JSON_H_
#define FATHOM_TESTS_HISTORY_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fathom::history {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  Kind kind = Kind::kNull;
  int column = 0;  // 1-based column where the value starts, for error messages
  bool boolean = false;
  std::string text;                 // kString: the decoded contents; kNumber: the literal as written
  std::optional<int64_t> integer;   // kNumber: the value, when the literal is an integer in int64 range
  std::vector<JsonValue> items;     // kArray
  std::vector<std::pair<std::string, JsonValue>> members;  // kObject, in input order
};

// "null", "boolean", "number", "string", "array", "object".
absl::string_view JsonKindName(JsonValue::Kind kind);

// Nesting deeper than this is refused, so hostile input cannot overflow the stack. A history line nests
// four deep (object, micro-op list, micro-op, read result).
inline constexpr int kMaxJsonDepth = 8;

// Parses exactly one JSON value making up all of `text` (JSON whitespace around it allowed).
// InvalidArgument "column C: <what is wrong>" otherwise.
absl::StatusOr<JsonValue> ParseJson(absl::string_view text);

}  // namespace fathom::history

#endif  // FATHOM_TESTS_HISTORY_JSON_H_
