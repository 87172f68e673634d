#include "bench/ycsb/redis_backend.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include "absl/strings/str_cat.h"
#include "bench/ycsb/server_memory.h"
#include "platform/base/status_macros.h"

namespace fathom::ycsb {
namespace {

constexpr char kIndexKey[] = "_indices";
constexpr timeval kTimeout = {5, 0};
constexpr int kTransferAttempts = 1000;  // a hung server fails an operation instead of hanging the driver

}  // namespace

int32_t JavaStringHashCode(const std::string& s) {
  uint32_t hash = 0;  // Java int arithmetic wraps; unsigned arithmetic gives the same bits without UB
  for (unsigned char c : s) hash = 31 * hash + c;
  return static_cast<int32_t>(hash);
}

void RedisBackend::ReplyDeleter::operator()(redisReply* reply) const { freeReplyObject(reply); }

RedisBackend::~RedisBackend() { Disconnect(); }

void RedisBackend::Disconnect() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

absl::Status RedisBackend::Init() {
  Disconnect();
  context_ = redisConnectWithTimeout(host_.c_str(), port_, kTimeout);
  if (context_ == nullptr) return absl::ResourceExhaustedError("hiredis could not allocate a context");
  if (context_->err != 0) {
    absl::Status status =
        absl::UnavailableError(absl::StrCat("redis connect to ", host_, ":", port_, ": ", context_->errstr));
    Disconnect();
    return status;
  }
  if (redisSetTimeout(context_, kTimeout) != REDIS_OK) {
    Disconnect();
    return absl::InternalError("redis: cannot set socket timeout");
  }
  return absl::OkStatus();
}

absl::Status RedisBackend::Cleanup() {
  Disconnect();
  return absl::OkStatus();
}

absl::StatusOr<RedisBackend::Reply> RedisBackend::Command(const std::vector<std::string>& args) {
  if (context_ == nullptr) RETURN_IF_ERROR(Init());
  std::vector<const char*> argv;
  std::vector<size_t> argv_lengths;
  argv.reserve(args.size());
  argv_lengths.reserve(args.size());
  for (const std::string& arg : args) {
    argv.push_back(arg.data());
    argv_lengths.push_back(arg.size());
  }
  Reply reply(static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(args.size()), argv.data(), argv_lengths.data())));
  if (reply == nullptr) {
    // The context is unusable after an I/O error; reconnect on the next command.
    absl::Status status = absl::UnavailableError(absl::StrCat("redis ", args[0], ": ", context_->errstr));
    Disconnect();
    return status;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    return absl::InternalError(absl::StrCat("redis ", args[0], ": ", std::string(reply->str, reply->len)));
  }
  return reply;
}

absl::StatusOr<ServerMemory> RedisBackend::MemoryUsed() {
  ASSIGN_OR_RETURN(Reply reply, Command({"INFO", "memory"}));
  if (reply->type != REDIS_REPLY_STRING) {
    return absl::DataLossError(absl::StrCat("redis INFO: reply of type ", reply->type, ", not a string"));
  }
  return RedisMemory(absl::string_view(reply->str, reply->len));
}

absl::Status RedisBackend::Read(const std::string& table, const std::string& key, const FieldList* fields,
                                Record* result) {
  result->clear();
  if (fields == nullptr) {
    ASSIGN_OR_RETURN(Reply reply, Command({"HGETALL", key}));
    if (reply->type != REDIS_REPLY_ARRAY) {
      return absl::InternalError("redis HGETALL: unexpected reply type");
    }
    if (reply->elements == 0) return absl::NotFoundError(key);
    for (size_t i = 0; i + 1 < reply->elements; i += 2) {
      const redisReply* name = reply->element[i];
      const redisReply* value = reply->element[i + 1];
      (*result)[std::string(name->str, name->len)] = std::string(value->str, value->len);
    }
    return absl::OkStatus();
  }
  std::vector<std::string> args = {"HMGET", key};
  args.insert(args.end(), fields->begin(), fields->end());
  ASSIGN_OR_RETURN(Reply reply, Command(args));
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != fields->size()) {
    return absl::InternalError("redis HMGET: unexpected reply");
  }
  for (size_t i = 0; i < fields->size(); ++i) {
    const redisReply* value = reply->element[i];
    if (value->type == REDIS_REPLY_STRING) (*result)[(*fields)[i]] = std::string(value->str, value->len);
  }
  // HMGET cannot tell a missing key from missing fields; a record always has its fields, so none means none.
  if (result->empty()) return absl::NotFoundError(key);
  return absl::OkStatus();
}

absl::Status RedisBackend::Scan(const std::string& table, const std::string& start_key, int64_t count,
                                const FieldList* fields, std::vector<Record>* result) {
  result->clear();
  ASSIGN_OR_RETURN(Reply keys, Command({"ZRANGEBYSCORE", kIndexKey, std::to_string(JavaStringHashCode(start_key)),
                                        "+inf", "LIMIT", "0", std::to_string(count)}));
  if (keys->type != REDIS_REPLY_ARRAY) return absl::InternalError("redis ZRANGEBYSCORE: unexpected reply");
  for (size_t i = 0; i < keys->elements; ++i) {
    Record record;
    absl::Status status = Read(table, std::string(keys->element[i]->str, keys->element[i]->len), fields, &record);
    if (!status.ok() && !absl::IsNotFound(status)) return status;  // a key deleted since the index read is fine
    if (status.ok()) result->push_back(std::move(record));
  }
  return absl::OkStatus();
}

absl::Status RedisBackend::Update(const std::string& table, const std::string& key, const Record& values) {
  std::vector<std::string> args = {"HSET", key};
  for (const auto& [name, value] : values) {
    args.push_back(name);
    args.push_back(value);
  }
  ASSIGN_OR_RETURN(Reply reply, Command(args));
  return absl::OkStatus();
}

absl::Status RedisBackend::Insert(const std::string& table, const std::string& key, const Record& values) {
  RETURN_IF_ERROR(Update(table, key, values));
  ASSIGN_OR_RETURN(Reply reply, Command({"ZADD", kIndexKey, std::to_string(JavaStringHashCode(key)), key}));
  return absl::OkStatus();
}

absl::Status RedisBackend::Transfer(const std::string& table, const std::string& from, const std::string& to,
                                    int64_t amount) {
  for (int attempt = 0; attempt < kTransferAttempts; ++attempt) {
    ASSIGN_OR_RETURN(Reply watched, Command({"WATCH", from, to}));
    Record a, b;
    const FieldList fields = {kBalanceField};
    absl::Status read = Read(table, from, &fields, &a);
    if (read.ok()) read = Read(table, to, &fields, &b);
    if (read.ok()) read = ApplyTransfer(a, from, b, to, amount);
    if (!read.ok()) {
      Command({"UNWATCH"}).IgnoreError();
      return read;
    }
    ASSIGN_OR_RETURN(Reply multi, Command({"MULTI"}));
    ASSIGN_OR_RETURN(Reply set_from, Command({"HSET", from, kBalanceField, a[kBalanceField]}));
    ASSIGN_OR_RETURN(Reply set_to, Command({"HSET", to, kBalanceField, b[kBalanceField]}));
    ASSIGN_OR_RETURN(Reply exec, Command({"EXEC"}));
    if (exec->type == REDIS_REPLY_ARRAY) return absl::OkStatus();
    if (exec->type != REDIS_REPLY_NIL) return absl::InternalError("redis EXEC: unexpected reply type");
    // Nil: a watched key changed since WATCH; nothing was written. Try again.
  }
  return absl::AbortedError(absl::StrCat("redis transfer ", from, " -> ", to, ": still conflicting after ",
                                         kTransferAttempts, " attempts"));
}

absl::Status RedisBackend::Delete(const std::string& table, const std::string& key) {
  ASSIGN_OR_RETURN(Reply deleted, Command({"DEL", key}));
  ASSIGN_OR_RETURN(Reply unindexed, Command({"ZREM", kIndexKey, key}));
  if (deleted->integer == 0) return absl::NotFoundError(key);
  return absl::OkStatus();
}

}  // namespace fathom::ycsb
