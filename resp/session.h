// Session: one client connection of the RESP gateway — its authentication, its MULTI queue and its
// WATCHed keys — running the commands it sends against one Fathom table (docs/formats/resp.md).
//
//   Session session(context);
//   session.Execute({"SET", "k", "v"}, out);   // appends "+OK\r\n" to out
//   if (session.closing()) ...                 // QUIT
//
// MULTI ... EXEC runs the queued commands in one Fathom transaction (atomic, strictly serializable;
// retried on conflict). WATCH remembers the keys' values; EXEC reads them again in its transaction and
// replies a null array, changing nothing, if any differs (a value changed and changed back is not seen:
// Redis would abort there too, Fathom does not).
#ifndef FATHOM_RESP_SESSION_H_
#define FATHOM_RESP_SESSION_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fathom/client.h"
#include "resp/key_locks.h"
#include "resp/request_parser.h"

namespace fathom::resp {

// Counters shared by every session of a gateway (INFO shows them).
struct GatewayStats {
  std::atomic<uint64_t> connected{0};
  std::atomic<uint64_t> connections{0};
  std::atomic<uint64_t> refused_connections{0};
  std::atomic<uint64_t> commands{0};
  std::atomic<uint64_t> error_replies{0};
  std::atomic<uint64_t> protocol_errors{0};
};

struct SessionContext {
  Client* client = nullptr;
  const Table* table = nullptr;
  // Non-empty: AUTH with it before any other command.
  std::string password;
  GatewayStats* stats = nullptr;
  // Writers of one key through this gateway take turns (null: they conflict optimistically).
  KeyLocks* key_locks = nullptr;
  size_t max_queued = 100000;   // commands in one MULTI
  size_t max_watched = 10000;   // keys WATCHed at once
};

class Session {
 public:
  explicit Session(const SessionContext& context) : context_(context) {}

  // Runs one command (its first word is the name, any case) and appends exactly one reply.
  void Execute(const Command& command, std::string& out);
  bool closing() const { return closing_; }

 private:
  void Control(const std::string& name, const Command& command, std::string& out);
  void Exec(std::string& out);
  void Watch(const Command& command, std::string& out);
  void Discard();
  void Error(std::string& out, std::string_view text);

  const SessionContext& context_;
  bool authenticated_ = false;
  bool closing_ = false;
  bool in_multi_ = false;
  bool multi_failed_ = false;  // a command could not be queued: EXEC aborts
  std::vector<Command> queued_;
  struct Watched {
    std::string key;
    std::optional<std::string> value;
  };
  std::vector<Watched> watched_;
};

}  // namespace fathom::resp

#endif  // FATHOM_RESP_SESSION_H_
