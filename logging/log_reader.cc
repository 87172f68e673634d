#include "logging/log_reader.h"

#include <filesystem>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "logging/rocksdb_status.h"
#include "rocksdb/db.h"

namespace fathom::logging {
namespace {

absl::Status InLog(const std::string& dir, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("log ", dir, ": ", s.message()));
}

}  // namespace

absl::StatusOr<LogContents> ReadLog(const std::string& dir, uint32_t expected_node, rocksdb::Env* env) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec)) {
    return absl::NotFoundError(absl::StrCat("log ", dir, ": no database there"));
  }
  rocksdb::Options options;
  options.paranoid_checks = true;
  options.create_if_missing = false;
  // A torn tail (the last batches of a crash) is expected and cut off; damage before the end is an error.
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  if (env != nullptr) options.env = env;
  rocksdb::DB* raw = nullptr;
  if (rocksdb::Status s = rocksdb::DB::OpenForReadOnly(options, dir, &raw); !s.ok()) {
    return FromRocks(s, absl::StrCat("log ", dir, ": RocksDB cannot open it"));
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  LogContents contents;
  contents.dir = dir;
  std::optional<uint64_t> node, position;
  uint64_t max_position = 0;
  std::string last_key;
  rocksdb::ReadOptions read;
  read.verify_checksums = true;
  read.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(read));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    const std::string_view value(it->value().data(), it->value().size());
    last_key.assign(key);
    if (!key.empty() && key[0] == 'm') {
      auto decoded = DecodeMeta(key, value);
      if (!decoded.ok()) return InLog(dir, decoded.status());
      if (key == std::string_view(kNodeKey)) {
        node = *decoded;
      } else if (key == std::string_view(kPositionKey)) {
        position = *decoded;
      } else if (key == std::string_view(kGapKey)) {
        return absl::FailedPreconditionError(absl::StrCat("log ", dir, ": has a gap: states from position ",
                                                          *decoded, " on were dropped"));
      } else {
        return absl::DataLossError(absl::StrCat("log ", dir, ": unknown ", DescribeKey(key)));
      }
      continue;
    }
    auto state = DecodeState(key, value);
    if (!state.ok()) return InLog(dir, state.status());
    max_position = std::max(max_position, state->position);
    contents.states.push_back(std::move(*state));
  }
  if (!it->status().ok()) {
    return FromRocks(it->status(), absl::StrCat("log ", dir, ": reading after ",
                                                last_key.empty() ? "the start" : DescribeKey(last_key)));
  }
  if (!node.has_value()) return absl::DataLossError(absl::StrCat("log ", dir, ": no node id (", kNodeKey, ")"));
  if (expected_node != 0 && *node != expected_node) {
    return absl::FailedPreconditionError(
        absl::StrCat("log ", dir, " belongs to node ", *node, ", not node ", expected_node));
  }
  contents.node_id = static_cast<uint32_t>(*node);
  contents.position = position.value_or(0);
  // Positions and states are written in the same batches: a state past the position means damage.
  if (max_position > contents.position) {
    return absl::DataLossError(absl::StrCat("log ", dir, " (node ", contents.node_id, "): a state at position ",
                                            max_position, " but the persisted position is ", contents.position));
  }
  return contents;
}

}  // namespace fathom::logging
