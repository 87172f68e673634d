#include "resp/session.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "resp/data_commands.h"
#include "resp/reply.h"
#include "resp/store.h"

namespace fathom::resp {
namespace {

// Fathom's failure as an error reply: its code and message.
std::string FailureText(const absl::Status& status) { return absl::StrCat("ERR ", status.ToString()); }

bool IsControl(std::string_view name) {
  for (std::string_view control : {"QUIT", "AUTH", "SELECT", "INFO", "COMMAND", "CONFIG", "MULTI", "EXEC", "DISCARD",
                                   "WATCH", "UNWATCH", "CLIENT", "HELLO"}) {
    if (name == control) return true;
  }
  return false;
}

}  // namespace

void Session::Error(std::string& out, std::string_view text) {
  AppendError(out, text);
  if (context_.stats != nullptr) context_.stats->error_replies.fetch_add(1, std::memory_order_relaxed);
}

void Session::Execute(const Command& command, std::string& out) {
  if (context_.stats != nullptr) context_.stats->commands.fetch_add(1, std::memory_order_relaxed);
  if (command.empty()) return Error(out, "ERR empty command");
  const std::string name = absl::AsciiStrToUpper(command[0]);
  if (!context_.password.empty() && !authenticated_ && name != "AUTH" && name != "QUIT" && name != "HELLO") {
    return Error(out, "NOAUTH Authentication required.");
  }
  const DataCommand* data = FindDataCommand(name);
  if (data == nullptr && !IsControl(name)) {
    if (in_multi_) multi_failed_ = true;
    return Error(out, absl::StrCat("ERR unknown command '", command[0].substr(0, 128), "'"));
  }
  if (data == nullptr) return Control(name, command, out);
  if (!ArityFits(data->arity, command.size())) {
    if (in_multi_) multi_failed_ = true;
    return Error(out, absl::StrCat("ERR wrong number of arguments for '", absl::AsciiStrToLower(name), "' command"));
  }
  if (in_multi_) {
    if (queued_.size() >= context_.max_queued) {
      multi_failed_ = true;
      return Error(out, absl::StrCat("ERR a MULTI holds at most ", context_.max_queued, " commands"));
    }
    queued_.push_back(command);
    return AppendSimple(out, "QUEUED");
  }
  std::string reply;
  absl::Status status;
  std::optional<KeyLocks::Held> turn;
  if (context_.key_locks != nullptr && data->writes != DataCommand::Writes::kNone) {
    turn.emplace(context_.key_locks->Lock(WrittenKeys(*data, command)));
  }
  if (!NeedsTransaction(*data, command)) {
    TableStore store(*context_.table);
    status = data->handler(store, command, reply);
  } else {
    status = context_.client->Transact([&](Transaction& tx) -> absl::Status {
      reply.clear();  // the body runs again after a conflict
      TxnStore store(tx, *context_.table);
      return data->handler(store, command, reply);
    });
  }
  if (!status.ok()) return Error(out, FailureText(status));
  if (!reply.empty() && reply[0] == '-' && context_.stats != nullptr) {
    context_.stats->error_replies.fetch_add(1, std::memory_order_relaxed);
  }
  out += reply;
}

void Session::Control(const std::string& name, const Command& command, std::string& out) {
  const size_t words = command.size();
  auto wrong_arity = [&] {
    Error(out, absl::StrCat("ERR wrong number of arguments for '", absl::AsciiStrToLower(name), "' command"));
  };
  if (in_multi_ && name != "EXEC" && name != "DISCARD" && name != "MULTI" && name != "WATCH" && name != "QUIT") {
    multi_failed_ = true;
    return Error(out, absl::StrCat("ERR ", name, " is not allowed inside MULTI by this gateway"));
  }
  if (name == "QUIT") {
    closing_ = true;
    return AppendSimple(out, "OK");
  }
  if (name == "AUTH") {
    // AUTH password, or AUTH default password (Redis 6's user form; only the default user exists).
    if (words != 2 && words != 3) return wrong_arity();
    if (context_.password.empty()) {
      return Error(out, "ERR AUTH called without any password configured for the default user.");
    }
    if ((words == 3 && command[1] != "default") || command[words - 1] != context_.password) {
      return Error(out, "WRONGPASS invalid username-password pair or user is disabled.");
    }
    authenticated_ = true;
    return AppendSimple(out, "OK");
  }
  if (name == "HELLO") {
    // RESP3 is not spoken; redis-cli and redis-benchmark fall back to RESP2.
    return Error(out, "NOPROTO this gateway speaks RESP2 only");
  }
  if (name == "SELECT") {
    if (words != 2) return wrong_arity();
    if (command[1] != "0") return Error(out, "ERR DB index is out of range (the gateway has one database, 0)");
    return AppendSimple(out, "OK");
  }
  if (name == "INFO") {
    std::string info = "# Server\r\nredis_version:7.0.0\r\nredis_mode:standalone\r\nfathom_gateway:1\r\n";
    absl::StrAppend(&info, "fathom_table:", context_.table->name(), "\r\n");
    if (context_.stats != nullptr) {
      const GatewayStats& s = *context_.stats;
      absl::StrAppend(&info, "\r\n# Clients\r\nconnected_clients:", s.connected.load(), "\r\n",
                      "\r\n# Stats\r\ntotal_connections_received:", s.connections.load(), "\r\n",
                      "rejected_connections:", s.refused_connections.load(), "\r\n",
                      "total_commands_processed:", s.commands.load(), "\r\n",
                      "total_error_replies:", s.error_replies.load(), "\r\n",
                      "protocol_errors:", s.protocol_errors.load(), "\r\n");
    }
    return AppendBulk(out, info);
  }
  if (name == "COMMAND") {
    // redis-cli asks for command docs to show hints; it does without them.
    if (words >= 2 && absl::AsciiStrToUpper(command[1]) == "COUNT") return AppendInteger(out, 0);
    return AppendArrayHeader(out, 0);
  }
  if (name == "CONFIG") {
    // redis-benchmark reads "save" and "appendonly"; the gateway has no such settings to change.
    if (words < 3 || absl::AsciiStrToUpper(command[1]) != "GET") {
      return Error(out, "ERR the gateway answers CONFIG GET only");
    }
    const std::string parameter = absl::AsciiStrToLower(command[2]);
    if (parameter == "save" || parameter == "appendonly") {
      AppendArrayHeader(out, 2);
      AppendBulk(out, parameter);
      return AppendBulk(out, parameter == "save" ? "" : "no");
    }
    return AppendArrayHeader(out, 0);
  }
  if (name == "CLIENT") {
    // SETNAME and SETINFO (sent by some clients on connect) are accepted and forgotten.
    if (words >= 2) {
      const std::string sub = absl::AsciiStrToUpper(command[1]);
      if (sub == "SETNAME" || sub == "SETINFO") return AppendSimple(out, "OK");
    }
    return Error(out, "ERR the gateway answers CLIENT SETNAME and SETINFO only");
  }
  if (name == "MULTI") {
    if (words != 1) return wrong_arity();
    if (in_multi_) return Error(out, "ERR MULTI calls can not be nested");
    in_multi_ = true;
    return AppendSimple(out, "OK");
  }
  if (name == "DISCARD") {
    if (words != 1) return wrong_arity();
    if (!in_multi_) return Error(out, "ERR DISCARD without MULTI");
    Discard();
    return AppendSimple(out, "OK");
  }
  if (name == "EXEC") {
    if (words != 1) return wrong_arity();
    if (!in_multi_) return Error(out, "ERR EXEC without MULTI");
    return Exec(out);
  }
  if (name == "WATCH") {
    if (in_multi_) return Error(out, "ERR WATCH inside MULTI is not allowed");
    if (words < 2) return wrong_arity();
    return Watch(command, out);
  }
  if (name == "UNWATCH") {
    if (words != 1) return wrong_arity();
    watched_.clear();
    return AppendSimple(out, "OK");
  }
  Error(out, absl::StrCat("ERR unknown command '", name, "'"));
}

void Session::Watch(const Command& command, std::string& out) {
  if (watched_.size() + command.size() - 1 > context_.max_watched) {
    return Error(out, absl::StrCat("ERR at most ", context_.max_watched, " keys may be watched"));
  }
  TableStore store(*context_.table);
  std::vector<Watched> added;
  for (size_t i = 1; i < command.size(); ++i) {
    absl::StatusOr<std::optional<std::string>> value = store.Get(command[i]);
    if (!value.ok()) return Error(out, FailureText(value.status()));
    added.push_back({command[i], *std::move(value)});
  }
  for (Watched& w : added) watched_.push_back(std::move(w));
  AppendSimple(out, "OK");
}

void Session::Discard() {
  in_multi_ = false;
  multi_failed_ = false;
  queued_.clear();
  watched_.clear();
}

void Session::Exec(std::string& out) {
  if (multi_failed_) {
    Discard();
    return Error(out, "EXECABORT Transaction discarded because of previous errors.");
  }
  std::string replies;
  bool watch_failed = false;
  std::optional<KeyLocks::Held> turn;
  if (context_.key_locks != nullptr) {
    std::vector<std::string_view> written;
    for (const Command& command : queued_) {
      for (std::string_view key : WrittenKeys(*FindDataCommand(absl::AsciiStrToUpper(command[0])), command)) {
        written.push_back(key);
      }
    }
    turn.emplace(context_.key_locks->Lock(written));
  }
  const absl::Status status = context_.client->Transact([&](Transaction& tx) -> absl::Status {
    replies.clear();  // the body runs again after a conflict
    watch_failed = false;
    TxnStore store(tx, *context_.table);
    for (const Watched& w : watched_) {
      absl::StatusOr<std::optional<std::string>> now = store.Get(w.key);
      if (!now.ok()) return now.status();
      if (*now != w.value) {
        watch_failed = true;
        return absl::OkStatus();  // commits nothing: it only read
      }
    }
    for (const Command& command : queued_) {
      if (absl::Status s = FindDataCommand(absl::AsciiStrToUpper(command[0]))->handler(store, command, replies);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  });
  const size_t count = queued_.size();
  Discard();
  if (!status.ok()) return Error(out, FailureText(status));
  if (watch_failed) return AppendNullArray(out);
  AppendArrayHeader(out, count);
  out += replies;
}

}  // namespace fathom::resp
