// fathomctl get|put|delete: one key of a table, read or written through fathom::Client (fathom/client.h):
// fathomctl joins the cluster as a client-only member for the call, and leaves.
//
//   fathomctl get TABLE KEY            prints the value, then a newline (--json: {"table","key","value"})
//   fathomctl put TABLE KEY VALUE      VALUE "-": the value is all of standard input, byte for byte
//   fathomctl delete TABLE KEY
//
// put and delete print nothing (--json: {"table","key","put"|"deleted":true}).
#ifndef FATHOM_TOOLS_FATHOMCTL_DATA_COMMANDS_H_
#define FATHOM_TOOLS_FATHOMCTL_DATA_COMMANDS_H_

#include <istream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fathom/options.h"

namespace fathom::fathomctl {

// Exit codes of the data commands (the others of fathomctl: 0 done, 1 failed, 2 bad usage).
inline constexpr int kExitDone = 0;
inline constexpr int kExitFailed = 1;  // no cluster, no such table, a value too big, ...
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNoKey = 3;   // get or delete of a key the table does not hold

struct DataCommand {
  std::string verb;  // "get", "put" or "delete"
  std::string table;
  std::string key;
  std::string value;  // put only
};

// {verb, TABLE, KEY[, VALUE]} as given on the command line; a put's VALUE "-" is read from `in` to its
// end. InvalidArgument (with the usage mistake) for anything else.
absl::StatusOr<DataCommand> ParseDataCommand(const std::vector<std::string>& args, std::istream& in);

struct DataResult {
  int exit_code = kExitDone;
  std::string out;  // for standard output
  std::string err;  // for standard error (without "fathomctl: ")
};

// Connects with `options`, runs `command`, leaves.
DataResult RunDataCommand(const ClientOptions& options, const DataCommand& command, bool json);

}  // namespace fathom::fathomctl

#endif  // FATHOM_TOOLS_FATHOMCTL_DATA_COMMANDS_H_
