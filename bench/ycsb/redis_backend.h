// RedisBackend: a record is a Redis hash (HSET key field value ..., HGETALL / HMGET to read), as YCSB's
// redis binding stores it. For scans, as in that binding, every key is also a member of the sorted set
// "_indices" scored by Java's String.hashCode of the key; a scan reads that index from the start key's
// score on (so "key order" is hash order, exactly YCSB's behaviour). The table name is ignored.
// One hiredis connection per instance (one instance per client thread). A dropped connection is
// reported as an error and reopened on the next operation.
//
//   RedisBackend db("127.0.0.1", 6379);
//   RETURN_IF_ERROR(db.Init());
#ifndef FATHOM_BENCH_YCSB_REDIS_BACKEND_H_
#define FATHOM_BENCH_YCSB_REDIS_BACKEND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/ycsb/backend.h"
#include "bench/ycsb/server_memory.h"

struct redisContext;
struct redisReply;

namespace fathom::ycsb {

class RedisBackend final : public Backend {
 public:
  RedisBackend(std::string host, int port) : host_(std::move(host)), port_(port) {}
  ~RedisBackend() override;

  absl::Status Init() override;
  absl::Status Cleanup() override;
  absl::Status Read(const std::string& table, const std::string& key, const FieldList* fields,
                    Record* result) override;
  absl::Status Scan(const std::string& table, const std::string& start_key, int64_t count,
                    const FieldList* fields, std::vector<Record>* result) override;
  absl::Status Update(const std::string& table, const std::string& key, const Record& values) override;
  absl::Status Insert(const std::string& table, const std::string& key, const Record& values) override;
  absl::Status Delete(const std::string& table, const std::string& key) override;
  // Optimistic, as Redis offers transactions: WATCH both keys, read, MULTI, write both, EXEC; again while
  // EXEC reports that a watched key changed (up to kTransferAttempts, then Aborted).
  absl::Status Transfer(const std::string& table, const std::string& from, const std::string& to,
                        int64_t amount) override;
  // The server's INFO memory: used_memory (server_memory.h, RedisMemory).
  absl::StatusOr<ServerMemory> MemoryUsed();

 private:
  struct ReplyDeleter {
    void operator()(redisReply* reply) const;
  };
  using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

  // Sends one command (binary-safe arguments) and returns the reply; Unavailable on a connection
  // error, Internal on a Redis error reply.
  absl::StatusOr<Reply> Command(const std::vector<std::string>& args);
  void Disconnect();

  const std::string host_;
  const int port_;
  redisContext* context_ = nullptr;
};

// Java's String.hashCode (for ASCII keys), the score YCSB's redis binding gives a key in "_indices".
int32_t JavaStringHashCode(const std::string& s);

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_REDIS_BACKEND_H_
