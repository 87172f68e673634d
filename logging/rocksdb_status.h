// RocksDB statuses as absl::Status, with context (the directory, what was being done).
#ifndef FATHOM_LOGGING_ROCKSDB_STATUS_H_
#define FATHOM_LOGGING_ROCKSDB_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/status.h"

namespace fathom::logging {

inline absl::Status FromRocks(const rocksdb::Status& s, const std::string& context) {
  if (s.ok()) return absl::OkStatus();
  const std::string message = absl::StrCat(context, ": ", s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsNotFound() || s.IsPathNotFound()) return absl::NotFoundError(message);
  if (s.IsNoSpace()) return absl::ResourceExhaustedError(message);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(message);
  if (s.IsNotSupported()) return absl::UnimplementedError(message);
  if (s.IsIOError()) return absl::UnavailableError(message);
  return absl::InternalError(message);
}

}  // namespace fathom::logging

#endif  // FATHOM_LOGGING_ROCKSDB_STATUS_H_
