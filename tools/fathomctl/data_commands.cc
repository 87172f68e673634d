// See data_commands.h.
#include "tools/fathomctl/data_commands.h"

#include <iterator>
#include <memory>

#include "absl/strings/str_cat.h"
#include "fathom/client.h"
#include "tools/fathomctl/report.h"

namespace fathom::fathomctl {
namespace {

std::string JsonFields(const DataCommand& command) {
  return absl::StrCat("\"table\":", JsonString(command.table), ",\"key\":", JsonString(command.key));
}

DataResult Failure(int exit_code, std::string message) { return {exit_code, "", std::move(message)}; }

}  // namespace

absl::StatusOr<DataCommand> ParseDataCommand(const std::vector<std::string>& args, std::istream& in) {
  if (args.empty()) return absl::InvalidArgumentError("give get, put or delete");
  DataCommand command{.verb = args[0]};
  const size_t want = command.verb == "put" ? 4 : 3;
  if (command.verb != "get" && command.verb != "put" && command.verb != "delete") {
    return absl::InvalidArgumentError(absl::StrCat("unknown data command '", command.verb, "'"));
  }
  if (args.size() != want) {
    return absl::InvalidArgumentError(absl::StrCat(command.verb, ": give TABLE KEY", want == 4 ? " VALUE" : "",
                                                   " (", args.size() - 1, " arguments given)"));
  }
  command.table = args[1];
  command.key = args[2];
  if (command.table.empty()) return absl::InvalidArgumentError(absl::StrCat(command.verb, ": the table name is empty"));
  if (command.key.empty()) return absl::InvalidArgumentError(absl::StrCat(command.verb, ": the key is empty"));
  if (want == 4) {
    command.value = args[3];
    if (command.value == "-") {
      command.value.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      if (in.bad()) return absl::InvalidArgumentError("put: reading the value from standard input failed");
    }
  }
  return command;
}

DataResult RunDataCommand(const ClientOptions& options, const DataCommand& command, bool json) {
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
  if (!client.ok()) return Failure(kExitFailed, absl::StrCat("joining the cluster: ", client.status().ToString()));
  absl::StatusOr<Table> table = (*client)->OpenTable(command.table);
  if (!table.ok()) {
    return Failure(kExitFailed, absl::StrCat(command.verb, " ", command.table, ": ", table.status().ToString(),
                                             absl::IsNotFound(table.status())
                                                 ? absl::StrCat(" (create it: fathomctl table create ", command.table, ")")
                                                 : ""));
  }
  const std::string what = absl::StrCat(command.verb, " ", command.table, " ", command.key);
  if (command.verb == "get") {
    absl::StatusOr<std::string> value = table->Get(command.key);
    if (absl::IsNotFound(value.status())) return Failure(kExitNoKey, absl::StrCat(what, ": no such key"));
    if (!value.ok()) return Failure(kExitFailed, absl::StrCat(what, ": ", value.status().ToString()));
    return {kExitDone, json ? absl::StrCat("{", JsonFields(command), ",\"value\":", JsonString(*value), "}\n")
                            : absl::StrCat(*value, "\n"),
            ""};
  }
  const absl::Status done = command.verb == "put" ? table->Put(command.key, command.value) : table->Delete(command.key);
  if (command.verb == "delete" && absl::IsNotFound(done)) return Failure(kExitNoKey, absl::StrCat(what, ": no such key"));
  if (!done.ok()) return Failure(kExitFailed, absl::StrCat(what, ": ", done.ToString()));
  if (!json) return {};
  return {kExitDone, absl::StrCat("{", JsonFields(command), command.verb == "put" ? ",\"put\":true}\n" : ",\"deleted\":true}\n"), ""};
}

}  // namespace fathom::fathomctl
