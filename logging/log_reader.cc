#include "logging/log_reader.h"

#include <filesystem>
#include <map>
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

rocksdb::ReadOptions VerifyingRead() {
  rocksdb::ReadOptions read;
  read.verify_checksums = true;
  read.fill_cache = false;
  return read;
}

}  // namespace

absl::Status CheckLogFormat(std::optional<uint64_t> format) {
  if (!format.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat("log format 1 (no ", kFormatKey, "; written by an older build), ",
                                                      "this build reads only log format ", kLogFormat));
  }
  if (*format != kLogFormat) {
    return absl::FailedPreconditionError(
        absl::StrCat("log format ", *format, ", this build reads only log format ", kLogFormat));
  }
  return absl::OkStatus();
}

absl::Status ReadSegments(rocksdb::DB& db, uint64_t folded, uint64_t position,
                          const std::function<void(ObjectState&&)>& apply) {
  if (folded > position) {
    return absl::DataLossError(absl::StrCat("folded up to position ", folded, ", past the persisted position ", position));
  }
  uint64_t next = folded + 1;  // the first position the next segment must cover
  std::string last_key;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(VerifyingRead()));
  for (it->Seek(SegmentKey(0)); it->Valid(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    last_key.assign(key);
    auto segment = DecodeSegment(key, std::string_view(it->value().data(), it->value().size()));
    if (!segment.ok()) return segment.status();
    if (segment->first != next) {
      return absl::DataLossError(absl::StrCat(DescribeKey(key), " starts at position ", segment->first,
                                              " but the log covers positions up to ", next - 1,
                                              next > folded + 1 ? "" : " (folded)", ": positions are missing"));
    }
    if (segment->last > position) {
      return absl::DataLossError(absl::StrCat(DescribeKey(key), " reaches position ", segment->last,
                                              " but the persisted position is ", position));
    }
    next = segment->last + 1;
    for (ObjectState& state : segment->states) apply(std::move(state));
  }
  if (!it->status().ok()) {
    return FromRocks(it->status(), absl::StrCat("reading after ", last_key.empty() ? "the object keys" : DescribeKey(last_key)));
  }
  if (next != position + 1) {
    return absl::DataLossError(absl::StrCat("the segments cover positions up to ", next - 1,
                                            " but the persisted position is ", position, ": segments are missing"));
  }
  return absl::OkStatus();
}

std::vector<ObjectState> NewestStates(const LogContents& log, uint64_t cut) {
  std::vector<ObjectState> newest;
  newest.reserve(log.states.size());
  for (const ObjectState& state : log.states) {
    if (state.log_epoch > cut) continue;
    // An object's states are adjacent and in version order: a later one replaces an earlier one.
    if (!newest.empty() && newest.back().address == state.address) {
      newest.back() = state;
    } else {
      newest.push_back(state);
    }
  }
  return newest;
}

absl::StatusOr<LogContents> ReadLog(const std::string& dir, uint32_t expected_node, rocksdb::Env* env) {
  const std::string current = (std::filesystem::path(dir) / "CURRENT").string();
  std::error_code ec;
  if (env != nullptr ? !env->FileExists(current).ok() : !std::filesystem::exists(current, ec)) {
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
  std::optional<uint64_t> node, position, format, folded, closed;
  // The metadata keys sort first; they are checked before any state is trusted.
  bool meta_checked = false;
  auto check_meta = [&]() -> absl::Status {
    meta_checked = true;
    if (!node.has_value()) return absl::DataLossError(absl::StrCat("log ", dir, ": no node id (", kNodeKey, ")"));
    if (expected_node != 0 && *node != expected_node) {
      return absl::FailedPreconditionError(
          absl::StrCat("log ", dir, " belongs to node ", *node, ", not node ", expected_node));
    }
    if (absl::Status s = CheckLogFormat(format); !s.ok()) return InLog(dir, s);
    return absl::OkStatus();
  };
  uint64_t max_position = 0;
  // By address: the folded state, then per log epoch the newest state in the segments (see LogContents).
  std::map<uint64_t, std::vector<ObjectState>> latest;
  std::string last_key;
  const std::string first_segment = SegmentKey(0);
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(VerifyingRead()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    const std::string_view value(it->value().data(), it->value().size());
    if (key >= std::string_view(first_segment)) break;  // segments: below, in position order
    last_key.assign(key);
    if (key == std::string_view(kMembersKey)) {
      auto members = DecodeMembers(key, value);
      if (!members.ok()) return InLog(dir, members.status());
      contents.members = std::move(*members);
      continue;
    }
    if (!key.empty() && key[0] == 'm') {
      auto decoded = DecodeMeta(key, value);
      if (!decoded.ok()) return InLog(dir, decoded.status());
      if (key == std::string_view(kNodeKey)) {
        node = *decoded;
      } else if (key == std::string_view(kPositionKey)) {
        position = *decoded;
      } else if (key == std::string_view(kFormatKey)) {
        format = *decoded;
      } else if (key == std::string_view(kFoldedKey)) {
        folded = *decoded;
      } else if (key == std::string_view(kClosedKey)) {
        closed = *decoded;
      } else if (key == std::string_view(kGapKey)) {
        return absl::FailedPreconditionError(absl::StrCat("log ", dir, ": has a gap: states from position ",
                                                          *decoded, " on were dropped"));
      } else {
        return absl::DataLossError(absl::StrCat("log ", dir, ": unknown ", DescribeKey(key)));
      }
      continue;
    }
    if (!meta_checked) {
      if (absl::Status s = check_meta(); !s.ok()) return s;
    }
    auto state = DecodeState(key, value);
    if (!state.ok()) return InLog(dir, state.status());
    max_position = std::max(max_position, state->position);
    const uint64_t address = state->address.raw();
    latest.emplace_hint(latest.end(), address, std::vector<ObjectState>{})->second.push_back(std::move(*state));
  }
  if (!it->status().ok()) {
    return FromRocks(it->status(), absl::StrCat("log ", dir, ": reading after ",
                                                last_key.empty() ? "the start" : DescribeKey(last_key)));
  }
  if (!meta_checked) {
    if (absl::Status s = check_meta(); !s.ok()) return s;
  }
  contents.node_id = static_cast<uint32_t>(*node);
  contents.position = position.value_or(0);
  contents.closed_epoch = closed.value_or(0);
  // Object keys hold what was folded: a state past the folded position (or the persisted one) is damage.
  const uint64_t folded_position = folded.value_or(0);
  if (max_position > std::min(folded_position, contents.position)) {
    return absl::DataLossError(absl::StrCat("log ", dir, " (node ", contents.node_id, "): an object key at position ",
                                            max_position, " but the folded position is ", folded_position,
                                            " and the persisted position is ", contents.position));
  }
  // Segments hold what came after; a later state of an object replaces the folded one.
  absl::Status segments = ReadSegments(*db, folded_position, contents.position, [&](ObjectState&& state) {
    std::vector<ObjectState>& states = latest[state.address.raw()];
    // An object's later states have later (or equal) log epochs: replace the newest of the same epoch.
    if (!states.empty() && states.back().log_epoch >= state.log_epoch) {
      states.back() = std::move(state);
    } else {
      states.push_back(std::move(state));
    }
  });
  if (!segments.ok()) return InLog(dir, segments);
  contents.states.reserve(latest.size());
  for (auto& [address, states] : latest) {
    for (ObjectState& state : states) contents.states.push_back(std::move(state));
  }
  return contents;
}

}  // namespace fathom::logging
