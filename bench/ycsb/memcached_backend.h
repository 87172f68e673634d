// MemcachedBackend: a record is one memcached item holding EncodeRecord(record) (record_codec.h).
// Insert is a set. Update is read-merge-write with compare-and-swap (gets + cas, retried on a race), so
// the fields not named in the update survive; YCSB's memcached binding instead replaces the value with
// only the updated fields, and costs one round trip where we spend two. Scan is not supported (memcached
// has no order); it counts as NOT_IMPLEMENTED. The table name is ignored. One libmemcached handle
// per instance (one instance per client thread), ASCII protocol, TCP_NODELAY.
//
//   MemcachedBackend db("127.0.0.1", 11211);
//   RETURN_IF_ERROR(db.Init());
#ifndef FATHOM_BENCH_YCSB_MEMCACHED_BACKEND_H_
#define FATHOM_BENCH_YCSB_MEMCACHED_BACKEND_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "bench/ycsb/backend.h"
#include "bench/ycsb/server_memory.h"

struct memcached_st;

namespace fathom::ycsb {

class MemcachedBackend final : public Backend {
 public:
  MemcachedBackend(std::string host, int port) : host_(std::move(host)), port_(port) {}
  ~MemcachedBackend() override;

  absl::Status Init() override;
  absl::Status Cleanup() override;
  absl::Status Read(const std::string& table, const std::string& key, const FieldList* fields,
                    Record* result) override;
  absl::Status Update(const std::string& table, const std::string& key, const Record& values) override;
  absl::Status Insert(const std::string& table, const std::string& key, const Record& values) override;
  absl::Status Delete(const std::string& table, const std::string& key) override;
  // The server's total_malloced ("stats slabs"): the slab pages it allocated for items, as taken.
  absl::StatusOr<ServerMemory> MemoryUsed();

 private:
  struct Item {
    std::string value;
    uint64_t cas = 0;
  };
  // gets: the value and its CAS token; NotFound if absent.
  absl::StatusOr<Item> Get(const std::string& key);
  void Close();

  const std::string host_;
  const int port_;
  memcached_st* memc_ = nullptr;
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_MEMCACHED_BACKEND_H_
