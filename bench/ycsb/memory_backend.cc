#include "bench/ycsb/memory_backend.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "absl/hash/hash.h"
#include "bench/ycsb/record_codec.h"
#include "platform/base/mutex.h"
#include "platform/base/status_macros.h"

namespace fathom::ycsb {
namespace {

// The decoded record under `key` in `shard`; NotFound if there is none.
absl::StatusOr<Record> Find(const MemoryStore::Shard& shard, const std::string& key)
    ABSL_SHARED_LOCKS_REQUIRED(shard.mu) {
  auto it = shard.records.find(key);
  if (it == shard.records.end()) return absl::NotFoundError(key);
  return DecodeRecord(it->second);
}

}  // namespace

MemoryStore::Shard& MemoryStore::ShardOf(const std::string& key) {
  return shards[absl::HashOf(key) % kShards];
}

absl::Status MemoryBackend::Read(const std::string& table, const std::string& key, const FieldList* fields,
                                 Record* result) {
  MemoryStore::Shard& shard = store_->ShardOf(key);
  MutexLock lock(&shard.mu);
  ASSIGN_OR_RETURN(Record record, Find(shard, key));
  *result = ProjectFields(std::move(record), fields);
  return absl::OkStatus();
}

absl::Status MemoryBackend::Scan(const std::string& table, const std::string& start_key, int64_t count,
                                 const FieldList* fields, std::vector<Record>* result) {
  std::vector<std::string> keys;
  {
    MutexLock lock(&store_->keys_mu);
    for (auto it = store_->keys.lower_bound(start_key); it != store_->keys.end() && count > 0; ++it, --count) {
      keys.push_back(*it);
    }
  }
  result->clear();
  for (const std::string& key : keys) {
    MemoryStore::Shard& shard = store_->ShardOf(key);
    MutexLock lock(&shard.mu);
    absl::StatusOr<Record> record = Find(shard, key);
    if (absl::IsNotFound(record.status())) continue;  // deleted since
    if (!record.ok()) return record.status();
    result->push_back(ProjectFields(*std::move(record), fields));
  }
  return absl::OkStatus();
}

absl::Status MemoryBackend::Update(const std::string& table, const std::string& key, const Record& values) {
  MemoryStore::Shard& shard = store_->ShardOf(key);
  MutexLock lock(&shard.mu);
  ASSIGN_OR_RETURN(Record record, Find(shard, key));
  for (const auto& [name, value] : values) record[name] = value;
  shard.records[key] = EncodeRecord(record);
  return absl::OkStatus();
}

absl::Status MemoryBackend::Insert(const std::string& table, const std::string& key, const Record& values) {
  MemoryStore::Shard& shard = store_->ShardOf(key);
  MutexLock lock(&shard.mu);
  shard.records[key] = EncodeRecord(values);
  MutexLock keys_lock(&store_->keys_mu);
  store_->keys.insert(key);
  return absl::OkStatus();
}

absl::Status MemoryBackend::Transfer(const std::string& table, const std::string& from, const std::string& to,
                                     int64_t amount) {
  if (from == to) return absl::InvalidArgumentError("a transfer needs two accounts");
  MemoryStore::Shard& from_shard = store_->ShardOf(from);
  MemoryStore::Shard& to_shard = store_->ShardOf(to);
  // One lock order for every pair (by address), and one lock when both keys share a shard.
  MemoryStore::Shard* first = std::min(&from_shard, &to_shard, std::less<>());
  MemoryStore::Shard* second = std::max(&from_shard, &to_shard, std::less<>());
  MutexLock first_lock(&first->mu);
  std::optional<MutexLock> second_lock;
  if (second != first) second_lock.emplace(&second->mu);
  ASSIGN_OR_RETURN(Record from_record, Find(from_shard, from));
  ASSIGN_OR_RETURN(Record to_record, Find(to_shard, to));
  RETURN_IF_ERROR(ApplyTransfer(from_record, from, to_record, to, amount));
  from_shard.records[from] = EncodeRecord(from_record);
  to_shard.records[to] = EncodeRecord(to_record);
  return absl::OkStatus();
}

absl::Status MemoryBackend::Delete(const std::string& table, const std::string& key) {
  MemoryStore::Shard& shard = store_->ShardOf(key);
  MutexLock lock(&shard.mu);
  if (shard.records.erase(key) == 0) return absl::NotFoundError(key);
  MutexLock keys_lock(&store_->keys_mu);
  store_->keys.erase(key);
  return absl::OkStatus();
}

}  // namespace fathom::ycsb
