#include "resp/data_commands.h"

#include <cstdint>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "resp/reply.h"

namespace fathom::resp {
namespace {

constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";

absl::Status Ping(Store&, const Command& command, std::string& reply) {
  if (command.size() > 2) AppendError(reply, "ERR wrong number of arguments for 'ping' command");
  else if (command.size() == 1) AppendSimple(reply, "PONG");
  else AppendBulk(reply, command[1]);
  return absl::OkStatus();
}

absl::Status Echo(Store&, const Command& command, std::string& reply) {
  AppendBulk(reply, command[1]);
  return absl::OkStatus();
}

absl::Status Get(Store& store, const Command& command, std::string& reply) {
  absl::StatusOr<std::optional<std::string>> value = store.Get(command[1]);
  if (!value.ok()) return value.status();
  if (value->has_value()) AppendBulk(reply, **value);
  else AppendNull(reply);
  return absl::OkStatus();
}

// Fathom stores no empty value: say so rather than fail with Fathom's InvalidArgument.
bool RefuseEmpty(std::string_view value, std::string& reply) {
  if (!value.empty()) return false;
  AppendError(reply, "ERR Fathom stores no empty values");
  return true;
}

absl::Status Set(Store& store, const Command& command, std::string& reply) {
  if (command.size() > 3) {
    AppendError(reply, "ERR SET options (EX, PX, NX, XX, GET, KEEPTTL, ...) are not supported by this gateway");
    return absl::OkStatus();
  }
  if (RefuseEmpty(command[2], reply)) return absl::OkStatus();
  if (absl::Status s = store.Put(command[1], command[2]); !s.ok()) return s;
  AppendSimple(reply, "OK");
  return absl::OkStatus();
}

absl::Status Del(Store& store, const Command& command, std::string& reply) {
  int64_t deleted = 0;
  for (size_t i = 1; i < command.size(); ++i) {
    absl::StatusOr<bool> was = store.Delete(command[i]);
    if (!was.ok()) return was.status();
    deleted += *was;
  }
  AppendInteger(reply, deleted);
  return absl::OkStatus();
}

absl::Status Exists(Store& store, const Command& command, std::string& reply) {
  int64_t found = 0;  // a key named twice counts twice, as in Redis
  for (size_t i = 1; i < command.size(); ++i) {
    absl::StatusOr<std::optional<std::string>> value = store.Get(command[i]);
    if (!value.ok()) return value.status();
    found += value->has_value();
  }
  AppendInteger(reply, found);
  return absl::OkStatus();
}

absl::Status MGet(Store& store, const Command& command, std::string& reply) {
  std::string values;
  for (size_t i = 1; i < command.size(); ++i) {
    absl::StatusOr<std::optional<std::string>> value = store.Get(command[i]);
    if (!value.ok()) return value.status();
    if (value->has_value()) AppendBulk(values, **value);
    else AppendNull(values);
  }
  AppendArrayHeader(reply, command.size() - 1);
  reply += values;
  return absl::OkStatus();
}

absl::Status MSet(Store& store, const Command& command, std::string& reply) {
  if (command.size() % 2 == 0) {
    AppendError(reply, "ERR wrong number of arguments for 'mset' command");
    return absl::OkStatus();
  }
  for (size_t i = 2; i < command.size(); i += 2) {
    if (RefuseEmpty(command[i], reply)) return absl::OkStatus();
  }
  for (size_t i = 1; i < command.size(); i += 2) {
    if (absl::Status s = store.Put(command[i], command[i + 1]); !s.ok()) return s;
  }
  AppendSimple(reply, "OK");
  return absl::OkStatus();
}

// Adds `by` to the decimal integer at the key (absent: 0), as Redis's INCRBY.
absl::Status AddTo(Store& store, const std::string& key, int64_t by, std::string& reply) {
  absl::StatusOr<std::optional<std::string>> value = store.Get(key);
  if (!value.ok()) return value.status();
  int64_t current = 0;
  if (value->has_value()) {
    // Redis's rule: a decimal integer without spaces or a '+' sign, within 64 bits.
    const std::string& text = **value;
    if (text.empty() || text.size() > 20 || text[0] == '+' || absl::ascii_isspace(text[0]) ||
        !absl::SimpleAtoi(text, &current) || absl::StrCat(current) != text) {
      AppendError(reply, kNotInteger);
      return absl::OkStatus();
    }
  }
  if ((by > 0 && current > std::numeric_limits<int64_t>::max() - by) ||
      (by < 0 && current < std::numeric_limits<int64_t>::min() - by)) {
    AppendError(reply, "ERR increment or decrement would overflow");
    return absl::OkStatus();
  }
  if (absl::Status s = store.Put(key, absl::StrCat(current + by)); !s.ok()) return s;
  AppendInteger(reply, current + by);
  return absl::OkStatus();
}

absl::Status Incr(Store& store, const Command& command, std::string& reply) { return AddTo(store, command[1], 1, reply); }
absl::Status Decr(Store& store, const Command& command, std::string& reply) { return AddTo(store, command[1], -1, reply); }

absl::Status IncrBy(Store& store, const Command& command, std::string& reply, bool negate) {
  int64_t by = 0;
  if (!absl::SimpleAtoi(command[2], &by) || (negate && by == std::numeric_limits<int64_t>::min())) {
    AppendError(reply, kNotInteger);
    return absl::OkStatus();
  }
  return AddTo(store, command[1], negate ? -by : by, reply);
}
absl::Status IncrBy(Store& store, const Command& command, std::string& reply) { return IncrBy(store, command, reply, false); }
absl::Status DecrBy(Store& store, const Command& command, std::string& reply) { return IncrBy(store, command, reply, true); }

using Writes = DataCommand::Writes;
constexpr DataCommand kCommands[] = {
    {"PING", -1, false, Ping, Writes::kNone},         {"ECHO", 2, false, Echo, Writes::kNone},
    {"GET", 2, false, Get, Writes::kNone},            {"SET", -3, false, Set, Writes::kFirst},
    {"DEL", -2, true, Del, Writes::kAll},             {"EXISTS", -2, true, Exists, Writes::kNone},
    {"MGET", -2, true, MGet, Writes::kNone},          {"MSET", -3, true, MSet, Writes::kEveryOther},
    {"INCR", 2, true, Incr, Writes::kFirst},          {"DECR", 2, true, Decr, Writes::kFirst},
    {"INCRBY", 3, true, IncrBy, Writes::kFirst},      {"DECRBY", 3, true, DecrBy, Writes::kFirst},
};

}  // namespace

const DataCommand* FindDataCommand(std::string_view name) {
  for (const DataCommand& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

bool ArityFits(int arity, size_t words) {
  return arity >= 0 ? words == static_cast<size_t>(arity) : words >= static_cast<size_t>(-arity);
}

std::vector<std::string_view> WrittenKeys(const DataCommand& spec, const Command& command) {
  std::vector<std::string_view> keys;
  switch (spec.writes) {
    case Writes::kNone: break;
    case Writes::kFirst: keys.push_back(command[1]); break;
    case Writes::kAll:
      for (size_t i = 1; i < command.size(); ++i) keys.push_back(command[i]);
      break;
    case Writes::kEveryOther:
      for (size_t i = 1; i < command.size(); i += 2) keys.push_back(command[i]);
      break;
  }
  return keys;
}

bool NeedsTransaction(const DataCommand& spec, const Command& command) {
  if ((spec.name == "DEL" || spec.name == "EXISTS") && command.size() == 2) return false;
  return spec.needs_transaction;
}

}  // namespace fathom::resp
