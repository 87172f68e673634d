#include "tests/history/parse.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "platform/base/status_macros.h"
#include "tests/history/json.h"

namespace fathom::history {
namespace {

absl::Status Invalid(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

// What a value is, for "expected X, got Y".
std::string Got(const JsonValue& v) {
  switch (v.kind) {
    case JsonValue::Kind::kNumber:
      return absl::StrCat("number ", v.text);
    case JsonValue::Kind::kString:
      return absl::StrCat("string \"", v.text.size() > 24 ? v.text.substr(0, 24) + "..." : v.text, "\"");
    case JsonValue::Kind::kBool:
      return v.boolean ? "true" : "false";
    default:
      return std::string(JsonKindName(v.kind));
  }
}

absl::StatusOr<int64_t> Integer(const JsonValue& v, absl::string_view where) {
  if (v.kind != JsonValue::Kind::kNumber) return Invalid(where, absl::StrCat("expected an integer, got ", Got(v)));
  if (v.integer.has_value()) return *v.integer;
  if (v.text.find_first_of(".eE") == std::string::npos) {
    return Invalid(where, absl::StrCat(v.text, " is outside the 64-bit integer range"));
  }
  return Invalid(where, absl::StrCat("expected an integer, got ", v.text));
}

absl::StatusOr<MicroOp> ParseMicroOp(const JsonValue& v, absl::string_view where) {
  if (v.kind != JsonValue::Kind::kArray || v.items.size() != 3) {
    const std::string got = v.kind == JsonValue::Kind::kArray ? absl::StrCat("an array of ", v.items.size())
                                                              : Got(v);
    return Invalid(where, absl::StrCat("expected [\":append\", key, value] or [\":r\", key, null or list], got ",
                                       got));
  }
  const JsonValue& f = v.items[0];
  if (f.kind != JsonValue::Kind::kString || (f.text != ":append" && f.text != ":r")) {
    return Invalid(where, absl::StrCat("expected \":append\" or \":r\" first, got ", Got(f)));
  }
  MicroOp op;
  ASSIGN_OR_RETURN(op.key, Integer(v.items[1], absl::StrCat(where, ", key")));
  const JsonValue& third = v.items[2];
  if (f.text == ":append") {
    op.kind = MicroOp::Kind::kAppend;
    ASSIGN_OR_RETURN(op.value, Integer(third, absl::StrCat(where, ", appended value")));
    return op;
  }
  op.kind = MicroOp::Kind::kRead;
  if (third.kind == JsonValue::Kind::kNull) return op;
  if (third.kind != JsonValue::Kind::kArray) {
    return Invalid(absl::StrCat(where, ", read result"), absl::StrCat("expected null or a list, got ", Got(third)));
  }
  op.result.emplace();
  for (size_t i = 0; i < third.items.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t element, Integer(third.items[i], absl::StrCat(where, ", read element ", i + 1)));
    op.result->push_back(element);
  }
  return op;
}

absl::StatusOr<EventType> ParseType(const JsonValue& v) {
  if (v.kind == JsonValue::Kind::kString) {
    if (v.text == "invoke") return EventType::kInvoke;
    if (v.text == "ok") return EventType::kOk;
    if (v.text == "fail") return EventType::kFail;
    if (v.text == "info") return EventType::kInfo;
  }
  return Invalid("field \"type\"", absl::StrCat("expected \"invoke\", \"ok\", \"fail\" or \"info\", got ", Got(v)));
}

// Reads are null until an ok completion fills them: an invoke does not know them yet, and the reads of a
// transaction that failed or whose outcome is unknown are not results anyone may rely on.
absl::Status CheckReadResults(const Event& event) {
  for (size_t i = 0; i < event.ops.size(); ++i) {
    const MicroOp& op = event.ops[i];
    if (op.kind != MicroOp::Kind::kRead) continue;
    const std::string where = absl::StrCat("field \"value\", micro-op ", i + 1);
    if (event.type == EventType::kOk && !op.result.has_value()) {
      return Invalid(where, "an ok completion's read must be a list ([] for an empty key), got null");
    }
    if (event.type != EventType::kOk && op.result.has_value()) {
      return Invalid(where, absl::StrCat("the read of ", event.type == EventType::kFail ? "a " : "an ",
                                         EventTypeName(event.type),
                                         (event.type == EventType::kInvoke ? "" : " completion"),
                                         " must be null, got a list"));
    }
  }
  return absl::OkStatus();
}

absl::Status WithLine(int line, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("line ", line, ": ", status.message()));
}

}  // namespace

absl::StatusOr<Event> ParseEvent(absl::string_view line) {
  absl::StatusOr<JsonValue> json = ParseJson(line);
  if (!json.ok()) return absl::InvalidArgumentError(absl::StrCat("bad JSON, ", json.status().message()));
  if (json->kind != JsonValue::Kind::kObject) {
    return absl::InvalidArgumentError(absl::StrCat("expected a JSON object, got ", Got(*json)));
  }
  Event event;
  bool seen_process = false, seen_type = false, seen_f = false, seen_value = false, seen_time = false;
  for (const auto& [name, v] : json->members) {
    if (name == "process") {
      seen_process = true;
      ASSIGN_OR_RETURN(event.process, Integer(v, "field \"process\""));
      if (event.process < 0) return Invalid("field \"process\"", "must not be negative");
    } else if (name == "type") {
      seen_type = true;
      ASSIGN_OR_RETURN(event.type, ParseType(v));
    } else if (name == "f") {
      seen_f = true;
      if (v.kind != JsonValue::Kind::kString || v.text != "txn") {
        return Invalid("field \"f\"", absl::StrCat("expected \"txn\", got ", Got(v)));
      }
    } else if (name == "value") {
      seen_value = true;
      if (v.kind != JsonValue::Kind::kArray) {
        return Invalid("field \"value\"", absl::StrCat("expected a list of micro-ops, got ", Got(v)));
      }
      for (size_t i = 0; i < v.items.size(); ++i) {
        ASSIGN_OR_RETURN(MicroOp op, ParseMicroOp(v.items[i], absl::StrCat("field \"value\", micro-op ", i + 1)));
        event.ops.push_back(std::move(op));
      }
    } else if (name == "time") {
      seen_time = true;
      ASSIGN_OR_RETURN(event.time, Integer(v, "field \"time\""));
      if (event.time < 0) return Invalid("field \"time\"", "must not be negative");
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown field \"", name, "\" (expected process, type, f, value, time)"));
    }
  }
  const std::pair<bool, const char*> required[] = {
      {seen_process, "process"}, {seen_type, "type"}, {seen_f, "f"}, {seen_value, "value"}, {seen_time, "time"}};
  for (const auto& [seen, name] : required) {
    if (!seen) return absl::InvalidArgumentError(absl::StrCat("missing field \"", name, "\""));
  }
  RETURN_IF_ERROR(CheckReadResults(event));
  return event;
}

absl::StatusOr<History> ParseHistory(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  // A final '\n' ends the last line; it does not start an empty one.
  if (!lines.empty() && lines.back().empty()) lines.pop_back();

  History history;
  absl::flat_hash_map<int64_t, int> open;  // process -> its transaction in progress
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int> appended_on;  // (key, value) -> line
  int64_t previous_time = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int n = static_cast<int>(i) + 1;
    if (lines[i].empty()) return WithLine(n, absl::InvalidArgumentError("empty line"));
    absl::StatusOr<Event> parsed = ParseEvent(lines[i]);
    if (!parsed.ok()) return WithLine(n, parsed.status());
    Event& event = *parsed;
    // Real-time order is taken from line order; a time going backwards means lines were reordered or
    // the recorder's clock was not taken under its lock.
    if (event.time < previous_time) {
      return WithLine(n, absl::InvalidArgumentError(absl::StrCat(
                             "time ", event.time, " is earlier than the previous line's ", previous_time,
                             " (lines must be in the order the events happened)")));
    }
    previous_time = event.time;

    auto it = open.find(event.process);
    if (event.type == EventType::kInvoke) {
      if (it != open.end()) {
        return WithLine(n, absl::InvalidArgumentError(absl::StrCat(
                               "process ", event.process, " invoked again while its invoke on line ",
                               history.txns[it->second].invoke_line, " has not completed")));
      }
      for (const MicroOp& op : event.ops) {
        if (op.kind != MicroOp::Kind::kAppend) continue;
        auto [at, inserted] = appended_on.try_emplace({op.key, op.value}, n);
        if (!inserted) {
          return WithLine(n, absl::InvalidArgumentError(absl::StrCat(
                                 "value ", op.value, " appended to key ", op.key, " again (first on line ",
                                 at->second, "); appended values must be unique per key")));
        }
      }
      Txn txn;
      txn.id = static_cast<int>(history.txns.size());
      txn.process = event.process;
      txn.ops = std::move(event.ops);
      txn.invoke_line = n;
      txn.invoke_time = event.time;
      open[event.process] = txn.id;
      history.txns.push_back(std::move(txn));
      continue;
    }

    if (it == open.end()) {
      return WithLine(n, absl::InvalidArgumentError(absl::StrCat(EventTypeName(event.type), " completion of process ",
                                                                 event.process, ", which has no invoke in progress")));
    }
    Txn& txn = history.txns[it->second];
    open.erase(it);
    if (event.ops.size() != txn.ops.size()) {
      return WithLine(n, absl::InvalidArgumentError(absl::StrCat(
                             "the ", EventTypeName(event.type), " completion has ", event.ops.size(),
                             " micro-ops but its invoke on line ", txn.invoke_line, " had ", txn.ops.size())));
    }
    for (size_t j = 0; j < event.ops.size(); ++j) {
      const MicroOp& done = event.ops[j];
      const MicroOp& asked = txn.ops[j];
      if (done.kind != asked.kind || done.key != asked.key || done.value != asked.value) {
        return WithLine(n, absl::InvalidArgumentError(absl::StrCat(
                               "micro-op ", j + 1, " of the ", EventTypeName(event.type), " completion is ",
                               FormatOps({done}), " but its invoke on line ", txn.invoke_line, " had ",
                               FormatOps({asked}))));
      }
    }
    txn.outcome = event.type;
    txn.complete_line = n;
    txn.complete_time = event.time;
    if (event.type == EventType::kOk) txn.ops = std::move(event.ops);
  }
  history.lines = static_cast<int>(lines.size());
  return history;
}

absl::StatusOr<History> ReadHistoryFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int error = errno;
    const std::string what = absl::StrCat("cannot open ", path, ": ", std::strerror(error));
    if (error == ENOENT) return absl::NotFoundError(what);
    if (error == EACCES) return absl::PermissionDeniedError(what);
    return absl::UnknownError(what);
  }
  std::string text;
  char buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, got);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return absl::DataLossError(absl::StrCat("error reading ", path));
  absl::StatusOr<History> history = ParseHistory(text);
  if (!history.ok()) {
    return absl::Status(history.status().code(), absl::StrCat(path, ": ", history.status().message()));
  }
  return history;
}

}  // namespace fathom::history
