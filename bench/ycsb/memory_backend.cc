#include "bench/ycsb/memory_backend.h"

#include "platform/base/mutex.h"

namespace fathom::ycsb {
absl::Status MemoryBackend::Read(const std::string& table, const std::string& key, const FieldList* fields,
                                 Record* result) {
  MutexLock lock(&store_->mu);
  auto it = store_->records.find(key);
  if (it == store_->records.end()) return absl::NotFoundError(key);
  *result = ProjectFields(it->second, fields);
  return absl::OkStatus();
}

absl::Status MemoryBackend::Scan(const std::string& table, const std::string& start_key, int64_t count,
                                 const FieldList* fields, std::vector<Record>* result) {
  MutexLock lock(&store_->mu);
  result->clear();
  for (auto it = store_->records.lower_bound(start_key); it != store_->records.end() && count > 0; ++it, --count) {
    result->push_back(ProjectFields(it->second, fields));
  }
  return absl::OkStatus();
}

absl::Status MemoryBackend::Update(const std::string& table, const std::string& key, const Record& values) {
  MutexLock lock(&store_->mu);
  auto it = store_->records.find(key);
  if (it == store_->records.end()) return absl::NotFoundError(key);
  for (const auto& [name, value] : values) it->second[name] = value;
  return absl::OkStatus();
}

absl::Status MemoryBackend::Insert(const std::string& table, const std::string& key, const Record& values) {
  MutexLock lock(&store_->mu);
  store_->records[key] = values;
  return absl::OkStatus();
}

absl::Status MemoryBackend::Delete(const std::string& table, const std::string& key) {
  MutexLock lock(&store_->mu);
  return store_->records.erase(key) == 1 ? absl::OkStatus() : absl::NotFoundError(key);
}

}  // namespace fathom::ycsb
