// MemoryBackend: records in hash maps in this process, shared by every instance made from one
// MemoryStore. Two uses: the workload tests drive it instead of a server, and `--backend=memory`
// measures the driver's own overhead with the least a store can do: a record is kept encoded in one
// string (record_codec.h, as Fathom and memcached keep it), so a read is a hash lookup and a decode, and
// keys are spread over shards with a lock each, so threads on different cores rarely meet. That is the
// ceiling any backend can show in this driver.
//
//   MemoryStore store;
//   MemoryBackend db(&store);
#ifndef FATHOM_BENCH_YCSB_MEMORY_BACKEND_H_
#define FATHOM_BENCH_YCSB_MEMORY_BACKEND_H_

#include <array>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "bench/ycsb/backend.h"

namespace fathom::ycsb {

struct MemoryStore {
  struct Shard {
    absl::Mutex mu;
    // key -> EncodeRecord(record); table names ignored.
    absl::flat_hash_map<std::string, std::string> records ABSL_GUARDED_BY(mu);
  };
  static constexpr int kShards = 64;
  Shard& ShardOf(const std::string& key);

  std::array<Shard, kShards> shards;
  absl::Mutex keys_mu;  // taken after a shard's mu, never before
  std::set<std::string> keys ABSL_GUARDED_BY(keys_mu);  // every key in order, for scans
};

class MemoryBackend final : public Backend {
 public:
  explicit MemoryBackend(MemoryStore* store) : store_(store) {}

  absl::Status Read(const std::string& table, const std::string& key, const FieldList* fields,
                    Record* result) override;
  // The records of the `count` keys from `start_key` on that exist when each is read (not one snapshot).
  absl::Status Scan(const std::string& table, const std::string& start_key, int64_t count,
                    const FieldList* fields, std::vector<Record>* result) override;
  absl::Status Update(const std::string& table, const std::string& key, const Record& values) override;
  absl::Status Insert(const std::string& table, const std::string& key, const Record& values) override;
  absl::Status Delete(const std::string& table, const std::string& key) override;
  absl::Status Transfer(const std::string& table, const std::string& from, const std::string& to,
                        int64_t amount) override;

 private:
  MemoryStore* const store_;
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_MEMORY_BACKEND_H_
