#include "bench/ycsb/memory_backend.h"

#include "platform/base/mutex.h"
#include "platform/base/status_macros.h"

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

absl::Status MemoryBackend::Transfer(const std::string& table, const std::string& from, const std::string& to,
                                     int64_t amount) {
  MutexLock lock(&store_->mu);
  auto a = store_->records.find(from);
  auto b = store_->records.find(to);
  if (a == store_->records.end()) return absl::NotFoundError(from);
  if (b == store_->records.end()) return absl::NotFoundError(to);
  Record from_record = a->second, to_record = b->second;
  RETURN_IF_ERROR(ApplyTransfer(from_record, from, to_record, to, amount));
  a->second = std::move(from_record);
  b->second = std::move(to_record);
  return absl::OkStatus();
}

absl::Status MemoryBackend::Delete(const std::string& table, const std::string& key) {
  MutexLock lock(&store_->mu);
  return store_->records.erase(key) == 1 ? absl::OkStatus() : absl::NotFoundError(key);
}

}  // namespace fathom::ycsb
