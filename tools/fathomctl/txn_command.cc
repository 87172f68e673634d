// See txn_command.h.
#include "tools/fathomctl/txn_command.h"

#include <iterator>
#include <map>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "fathom/client.h"
#include "tools/fathomctl/report.h"

namespace fathom::fathomctl {
namespace {

constexpr char kBlanks[] = " \t";

// The first word of `rest` (blank-separated), removed from it with the blanks after it.
std::string TakeWord(std::string_view& rest) {
  const size_t end = std::min(rest.find_first_of(kBlanks), rest.size());
  std::string word(rest.substr(0, end));
  rest.remove_prefix(end);
  const size_t next = rest.find_first_not_of(kBlanks);
  rest.remove_prefix(next == std::string_view::npos ? rest.size() : next);
  return word;
}

absl::StatusOr<TxnOperation> ParseOperation(std::string_view text, size_t number) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("txn: operation ", number, " ('", std::string(text), "'): ", why));
  };
  std::string_view rest = text;
  TxnOperation op;
  op.verb = TakeWord(rest);
  if (op.verb != "get" && op.verb != "put" && op.verb != "delete") {
    return bad(absl::StrCat("unknown operation '", op.verb, "' (get, put or delete)"));
  }
  op.table = TakeWord(rest);
  op.key = TakeWord(rest);
  if (op.table.empty() || op.key.empty()) return bad(absl::StrCat("give ", op.verb, " TABLE KEY", op.verb == "put" ? " VALUE" : ""));
  if (op.verb == "put") {
    if (rest.empty()) return bad("give put TABLE KEY VALUE");
    op.value = std::string(rest);
  } else if (!rest.empty()) {
    return bad(absl::StrCat("unexpected '", std::string(rest), "' after the key"));
  }
  return op;
}

std::string TextLine(const TxnOperation& op, const std::string& outcome, const std::string* value) {
  std::string line = absl::StrCat(outcome, "\t", op.table, "\t", op.key);
  if (value != nullptr) absl::StrAppend(&line, "\t", *value);
  return line + "\n";
}

}  // namespace

absl::StatusOr<std::vector<TxnOperation>> ParseTxnScript(const std::vector<std::string>& args, std::istream& in) {
  if (args.size() != 2) return absl::InvalidArgumentError("txn: give one SCRIPT argument, or - to read it from standard input");
  std::string script = args[1];
  const bool from_input = script == "-";
  if (from_input) {
    script.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return absl::InvalidArgumentError("txn: reading the script from standard input failed");
  }
  std::vector<TxnOperation> operations;
  size_t number = 0;
  // Standard input: one operation per line (a value may hold ';'); an argument: ';' separates too.
  std::vector<absl::string_view> pieces = absl::StrSplit(script, absl::ByAnyChar(from_input ? "\n" : ";\n"));
  for (absl::string_view trimmed : pieces) {
    const absl::string_view stripped = absl::StripAsciiWhitespace(trimmed);
    const std::string_view piece(stripped.data(), stripped.size());
    if (piece.empty() || piece[0] == '#') continue;
    if (++number > kMaxTxnOperations) {
      return absl::InvalidArgumentError(absl::StrCat("txn: more than ", kMaxTxnOperations, " operations"));
    }
    absl::StatusOr<TxnOperation> op = ParseOperation(piece, number);
    if (!op.ok()) return op.status();
    operations.push_back(*std::move(op));
  }
  if (operations.empty()) return absl::InvalidArgumentError("txn: the script has no operation");
  return operations;
}

DataResult RunTxnScript(const ClientOptions& options, const std::vector<TxnOperation>& operations, bool json) {
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
  if (!client.ok()) return {kExitFailed, "", absl::StrCat("joining the cluster: ", client.status().ToString())};
  std::map<std::string, Table> tables;
  for (const TxnOperation& op : operations) {
    if (tables.count(op.table) > 0) continue;
    absl::StatusOr<Table> table = (*client)->OpenTable(op.table);
    if (!table.ok()) {
      return {kExitFailed, "",
              absl::StrCat("txn: table ", op.table, ": ", table.status().ToString(),
                           absl::IsNotFound(table.status()) ? absl::StrCat(" (create it: fathomctl table create ", op.table, ")")
                                                            : "")};
    }
    tables.emplace(op.table, *std::move(table));
  }
  // The body may run several times (a conflict): each run starts its results afresh.
  std::vector<std::string> text;
  std::vector<std::string> records;
  const absl::Status done = (*client)->Transact([&](Transaction& tx) -> absl::Status {
    text.clear();
    records.clear();
    for (const TxnOperation& op : operations) {
      const Table& table = tables.at(op.table);
      std::string record = absl::StrCat("{\"op\":", JsonString(op.verb), ",\"table\":", JsonString(op.table),
                                        ",\"key\":", JsonString(op.key));
      if (op.verb == "get") {
        absl::StatusOr<std::string> value = tx.Get(table, op.key);
        if (!value.ok() && !absl::IsNotFound(value.status())) return value.status();
        text.push_back(TextLine(op, value.ok() ? "found" : "missing", value.ok() ? &*value : nullptr));
        absl::StrAppend(&record, ",\"found\":", value.ok() ? "true,\"value\":" + JsonString(*value) : "false");
      } else if (op.verb == "put") {
        if (absl::Status s = tx.Put(table, op.key, op.value); !s.ok()) return s;
        text.push_back(TextLine(op, "put", nullptr));
      } else {
        absl::Status s = tx.Delete(table, op.key);
        if (!s.ok() && !absl::IsNotFound(s)) return s;
        text.push_back(TextLine(op, s.ok() ? "deleted" : "missing", nullptr));
        absl::StrAppend(&record, ",\"found\":", s.ok() ? "true" : "false");
      }
      records.push_back(record + "}");
    }
    return absl::OkStatus();
  });
  if (!done.ok()) {
    return {kExitFailed, "",
            absl::StrCat("txn: not committed: ", done.ToString(),
                         MayHaveCommitted(done) ? " (it may nonetheless have taken effect: read the keys again)" : "")};
  }
  DataResult result;
  if (json) {
    result.out = absl::StrCat("{\"committed\":true,\"results\":[", absl::StrJoin(records, ","), "]}\n");
  } else {
    result.out = absl::StrJoin(text, "");
  }
  return result;
}

}  // namespace fathom::fathomctl
