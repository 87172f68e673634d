// MemoryBackend: records in a std::map in this process, shared by every instance made from one
// MemoryStore. Two uses: the workload tests drive it instead of a server, and `--backend=memory`
// measures the driver's own overhead (the ceiling any backend can show in this driver).
//
//   MemoryStore store;
//   MemoryBackend db(&store);
#ifndef FATHOM_BENCH_YCSB_MEMORY_BACKEND_H_
#define FATHOM_BENCH_YCSB_MEMORY_BACKEND_H_

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "bench/ycsb/backend.h"

namespace fathom::ycsb {

struct MemoryStore {
  absl::Mutex mu;
  std::map<std::string, Record> records ABSL_GUARDED_BY(mu);  // key -> record; table names ignored
};

class MemoryBackend final : public Backend {
 public:
  explicit MemoryBackend(MemoryStore* store) : store_(store) {}

  absl::Status Read(const std::string& table, const std::string& key, const FieldList* fields,
                    Record* result) override;
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
