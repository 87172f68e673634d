// The gateway's commands on data (GET, SET, DEL, EXISTS, MGET, MSET, INCR, DECR, INCRBY, DECRBY, and PING
// and ECHO, which a MULTI may queue too), each on a Store. A handler appends exactly one reply. A
// user's mistake (a value that is not an integer, an unsupported option) is an error reply with OK
// status; a non-OK status is Fathom's failure (unavailable, ...), which aborts the transaction the
// command runs in and becomes the command's reply.
#ifndef FATHOM_RESP_DATA_COMMANDS_H_
#define FATHOM_RESP_DATA_COMMANDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "resp/request_parser.h"
#include "resp/store.h"

namespace fathom::resp {

using DataHandler = absl::Status (*)(Store& store, const Command& command, std::string& reply);

struct DataCommand {
  std::string_view name;  // upper case
  // Redis's convention: N means exactly N words (the name included), -N at least N.
  int arity;
  // Run alone, it needs a transaction of its own (several keys, or a read and a write).
  bool needs_transaction;
  DataHandler handler;
  // The words that are keys it writes (KeyLocks).
  enum class Writes { kNone, kFirst, kAll, kEveryOther } writes;
};

// Null for a name that is not a data command. `name` must be upper case.
const DataCommand* FindDataCommand(std::string_view name);
// Whether `words` (the name included) fits `arity`.
bool ArityFits(int arity, size_t words);
// The keys `command` writes.
std::vector<std::string_view> WrittenKeys(const DataCommand& spec, const Command& command);
// Whether the command, as given, needs a transaction when run alone (DEL and EXISTS of one key do not).
bool NeedsTransaction(const DataCommand& spec, const Command& command);

}  // namespace fathom::resp

#endif  // FATHOM_RESP_DATA_COMMANDS_H_
