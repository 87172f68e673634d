// fathomctl txn: a small script of gets, puts and deletes run as one transaction (fathom::Client::Transact:
// all or nothing, strictly serializable, run again on a conflict).
//
//   fathomctl txn 'get accounts alice; put accounts alice 90; put accounts bob 110'
//   fathomctl txn - < script.txt           one operation per line; # starts a comment
//
// Operations: get TABLE KEY, put TABLE KEY VALUE, delete TABLE KEY. A put's VALUE is the rest of its
// operation after the key and one run of blanks (spaces inside it are kept). In an argument, ';' also
// ends an operation (a value with ';' in it goes through standard input). At most 1,000 operations.
//
// Output once committed, one line per operation in script order, its outcome first, tab-separated:
//   found TABLE KEY VALUE | missing TABLE KEY        (get)
//   put TABLE KEY                                    (put)
//   deleted TABLE KEY | missing TABLE KEY            (delete)
// A get sees the script's own earlier writes. --json: {"committed":true,"results":[{"op":"get","table":...,
// "key":...,"found":true,"value":...},...]} (values may hold any bytes there; the text form prints them raw).
// Exit codes: 0 committed, 1 not committed (no cluster, no such table, a conflict past the retries, a
// failure: the message says whether the commit may nonetheless have taken effect), 2 a bad script.
#ifndef FATHOM_TOOLS_FATHOMCTL_TXN_COMMAND_H_
#define FATHOM_TOOLS_FATHOMCTL_TXN_COMMAND_H_

#include <istream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fathom/options.h"
#include "tools/fathomctl/data_commands.h"

namespace fathom::fathomctl {

inline constexpr size_t kMaxTxnOperations = 1000;

struct TxnOperation {
  std::string verb;  // "get", "put" or "delete"
  std::string table;
  std::string key;
  std::string value;  // put only
};

// {"txn", SCRIPT} or {"txn", "-"} (the script is all of `in`). InvalidArgument naming the operation (by
// number) and what is wrong with it: an unknown verb, missing or extra words, an empty script, too many
// operations.
absl::StatusOr<std::vector<TxnOperation>> ParseTxnScript(const std::vector<std::string>& args, std::istream& in);

// Connects with `options`, opens the tables named, runs the operations in one transaction, leaves.
DataResult RunTxnScript(const ClientOptions& options, const std::vector<TxnOperation>& operations, bool json);

}  // namespace fathom::fathomctl

#endif  // FATHOM_TOOLS_FATHOMCTL_TXN_COMMAND_H_
