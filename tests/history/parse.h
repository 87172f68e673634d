// Reading history files (docs/formats/history.md): one strict JSON object per line, checked against the
// schema, then invokes paired with their completions into transactions.
#ifndef FATHOM_TESTS_HISTORY_PARSE_H_
#define FATHOM_TESTS_HISTORY_PARSE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/history/types.h"

namespace fathom::history {

// One line (without its '\n'), checked against the schema of a single event. InvalidArgument naming
// the field and what is wrong; the column for bad JSON.
absl::StatusOr<Event> ParseEvent(absl::string_view line);

// A whole history: every line parsed, then the rules that span lines (pairing, matching micro-ops,
// unique appends, time order). InvalidArgument "line N: ..." on the first problem found.
absl::StatusOr<History> ParseHistory(absl::string_view text);

// ParseHistory on the file's contents; NotFound/PermissionDenied etc. when it cannot be read.
absl::StatusOr<History> ReadHistoryFile(const std::string& path);

}  // namespace fathom::history

#endif  // FATHOM_TESTS_HISTORY_PARSE_H_
