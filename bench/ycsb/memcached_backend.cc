#include "bench/ycsb/memcached_backend.h"

#include <libmemcached/memcached.h>

#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bench/ycsb/record_codec.h"
#include "platform/base/status_macros.h"

namespace fathom::ycsb {
namespace {

constexpr int kCasAttempts = 16;  // concurrent updates of one hot key lose a CAS race now and then
constexpr uint64_t kTimeoutMs = 5000;

absl::Status ToStatus(memcached_st* memc, memcached_return_t rc, const char* what) {
  if (rc == MEMCACHED_SUCCESS) return absl::OkStatus();
  const std::string message = absl::StrCat("memcached ", what, ": ", memcached_strerror(memc, rc));
  if (rc == MEMCACHED_NOTFOUND) return absl::NotFoundError(message);
  if (rc == MEMCACHED_DATA_EXISTS) return absl::AbortedError(message);  // CAS lost a race
  return absl::UnavailableError(message);
}

}  // namespace

MemcachedBackend::~MemcachedBackend() { Close(); }

void MemcachedBackend::Close() {
  if (memc_ != nullptr) memcached_free(memc_);
  memc_ = nullptr;
}

absl::Status MemcachedBackend::Init() {
  Close();
  memc_ = memcached_create(nullptr);
  if (memc_ == nullptr) return absl::ResourceExhaustedError("memcached_create failed");
  memcached_return_t rc = memcached_server_add(memc_, host_.c_str(), static_cast<in_port_t>(port_));
  if (rc != MEMCACHED_SUCCESS) {
    absl::Status status = ToStatus(memc_, rc, "server_add");
    Close();
    return status;
  }
  memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
  memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
  memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, kTimeoutMs);
  memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, kTimeoutMs);
  // libmemcached connects lazily; a version round trip proves the server answers now.
  rc = memcached_version(memc_);
  if (rc != MEMCACHED_SUCCESS) {
    absl::Status status = absl::UnavailableError(
        absl::StrCat("memcached at ", host_, ":", port_, " does not answer: ", memcached_strerror(memc_, rc)));
    Close();
    return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<ServerMemory> MemcachedBackend::MemoryUsed() {
  if (memc_ == nullptr) RETURN_IF_ERROR(Init());
  struct Found {
    bool seen = false;
    std::string value;
  } found;
  auto each = [](const memcached_instance_st*, const char* key, size_t key_length, const char* value,
                 size_t value_length, void* context) -> memcached_return_t {
    if (std::string_view(key, key_length) == "total_malloced") {
      auto* f = static_cast<Found*>(context);
      f->seen = true;
      f->value.assign(value, value_length);
    }
    return MEMCACHED_SUCCESS;
  };
  // "stats slabs" reports it (the general "stats" does not).
  RETURN_IF_ERROR(ToStatus(memc_, memcached_stat_execute(memc_, "slabs", each, &found), "stats slabs"));
  uint64_t bytes = 0;
  if (!found.seen) return absl::NotFoundError("memcached stats slabs: no total_malloced");
  if (!absl::SimpleAtoi(found.value, &bytes)) {
    return absl::DataLossError(absl::StrCat("memcached stats slabs: total_malloced is \"", found.value, "\""));
  }
  return ServerMemory{bytes, -1};
}

absl::Status MemcachedBackend::Cleanup() {
  Close();
  return absl::OkStatus();
}

absl::StatusOr<MemcachedBackend::Item> MemcachedBackend::Get(const std::string& key) {
  if (memc_ == nullptr) RETURN_IF_ERROR(Init());
  const char* keys[] = {key.data()};
  const size_t key_lengths[] = {key.size()};
  memcached_return_t rc = memcached_mget(memc_, keys, key_lengths, 1);
  if (rc != MEMCACHED_SUCCESS) return ToStatus(memc_, rc, "mget");
  Item item;
  bool found = false;
  // Drain every result so the connection is ready for the next command, even if the server misbehaves.
  while (true) {
    memcached_result_st* result = memcached_fetch_result(memc_, nullptr, &rc);
    if (result == nullptr) break;
    if (!found) {
      item.value.assign(memcached_result_value(result), memcached_result_length(result));
      item.cas = memcached_result_cas(result);
      found = true;
    }
    memcached_result_free(result);
  }
  if (rc != MEMCACHED_END && rc != MEMCACHED_SUCCESS && rc != MEMCACHED_NOTFOUND) {
    return ToStatus(memc_, rc, "fetch");
  }
  if (!found) return absl::NotFoundError(absl::StrCat("memcached: no key ", key));
  return item;
}

absl::Status MemcachedBackend::Read(const std::string& table, const std::string& key, const FieldList* fields,
                                    Record* result) {
  ASSIGN_OR_RETURN(Item item, Get(key));
  ASSIGN_OR_RETURN(Record record, DecodeRecord(item.value));
  if (fields == nullptr) {
    *result = std::move(record);
    return absl::OkStatus();
  }
  result->clear();
  for (const std::string& field : *fields) {
    auto it = record.find(field);
    if (it != record.end()) (*result)[field] = std::move(it->second);
  }
  return absl::OkStatus();
}

absl::Status MemcachedBackend::Update(const std::string& table, const std::string& key, const Record& values) {
  for (int attempt = 0; attempt < kCasAttempts; ++attempt) {
    ASSIGN_OR_RETURN(Item item, Get(key));
    ASSIGN_OR_RETURN(Record record, DecodeRecord(item.value));
    for (const auto& [name, value] : values) record[name] = value;
    const std::string encoded = EncodeRecord(record);
    const memcached_return_t rc =
        memcached_cas(memc_, key.data(), key.size(), encoded.data(), encoded.size(), 0, 0, item.cas);
    if (rc != MEMCACHED_DATA_EXISTS) return ToStatus(memc_, rc, "cas");
  }
  return absl::AbortedError(absl::StrCat("memcached update of ", key, ": lost ", kCasAttempts, " CAS races"));
}

absl::Status MemcachedBackend::Insert(const std::string& table, const std::string& key, const Record& values) {
  if (memc_ == nullptr) RETURN_IF_ERROR(Init());
  const std::string encoded = EncodeRecord(values);
  return ToStatus(memc_, memcached_set(memc_, key.data(), key.size(), encoded.data(), encoded.size(), 0, 0), "set");
}

absl::Status MemcachedBackend::Delete(const std::string& table, const std::string& key) {
  if (memc_ == nullptr) RETURN_IF_ERROR(Init());
  return ToStatus(memc_, memcached_delete(memc_, key.data(), key.size(), 0), "delete");
}

}  // namespace fathom::ycsb
