#include "logging/record_format.h"

// The streaming state on the stack needs the struct definition.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "platform/base/byte_order.h"

namespace fathom::logging {
namespace {

//  offset size field           (little-endian)
//   0     1    format          kRecordFormat
//   1     1    role            1 primary, 2 backup
//   2     2    txn thread
//   4     4    capacity
//   8     4    incarnation
//  12     4    flags           bit 0 live; other bits zero
//  16     8    version         < 2^63
//  24     8    position
//  32     8    txn epoch
//  40     8    txn counter
//  48     4    txn node
//  52     4    payload length  <= capacity - 32
//  56     8    log epoch
//  64     n    payload
//  64+n   8    checksum        XXH3-64 of key bytes, then value bytes [0, 64+n)
constexpr uint64_t kMaxVersion = (uint64_t{1} << 63) - 1;
constexpr size_t kObjectHeaderBytes = 32;  // object::kHeaderBytes (the slot's own header)

uint64_t Checksum(std::string_view key, std::string_view covered) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, key.data(), key.size());
  XXH3_64bits_update(&state, covered.data(), covered.size());
  return XXH3_64bits_digest(&state);
}

absl::Status Damaged(std::string_view key, absl::string_view what) {
  return absl::DataLossError(absl::StrCat(DescribeKey(key), ": ", what));
}

// What is wrong with a decoded state whose checksum matched (a writer's bug, not rot); empty if nothing.
std::string CheckFields(const ObjectState& state, uint32_t length) {
  if ((state.flags & ~uint32_t{1}) != 0) return absl::StrFormat("unknown flags 0x%x", state.flags);
  if (state.version > kMaxVersion) return absl::StrCat("version ", state.version, " out of range");
  if (state.capacity < kObjectHeaderBytes || state.capacity % 8 != 0 ||
      uint64_t{length} > state.capacity - kObjectHeaderBytes) {
    return absl::StrCat("payload of ", length, " bytes in a slot of ", state.capacity);
  }
  if (state.position == 0) return "position 0";
  return "";
}

std::string BigEndianKey(char prefix, uint64_t value) {
  std::string key(9, '\0');
  key[0] = prefix;
  for (int i = 0; i < 8; ++i) key[1 + i] = static_cast<char>(value >> (56 - 8 * i));
  return key;
}

uint64_t BigEndianValue(std::string_view key) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = value << 8 | static_cast<uint8_t>(key[1 + i]);
  return value;
}

absl::Status UnknownFormat(std::string_view key, uint8_t format) {
  return absl::FailedPreconditionError(absl::StrCat(DescribeKey(key), ": record format version ", format,
                                                    ", this build reads only ", kRecordFormat));
}

}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kPrimary:
      return "primary";
    case Role::kBackup:
      return "backup";
  }
  return "unknown";
}

std::string ObjectKey(memory::GlobalAddress address) { return BigEndianKey('o', address.raw()); }

std::string SegmentKey(uint64_t first_position) { return BigEndianKey('s', first_position); }

std::string DescribeKey(std::string_view key) {
  if (key.size() == 9 && key[0] == 'o') {
    return absl::StrCat("object ", memory::GlobalAddress::FromRaw(BigEndianValue(key)).ToString());
  }
  if (key.size() == 9 && key[0] == 's') return absl::StrCat("segment ", BigEndianValue(key));
  for (std::string_view meta : {kNodeKey, kPositionKey, kGapKey, kFormatKey, kFoldedKey, kClosedKey}) {
    if (key == meta) return absl::StrCat("meta ", std::string(key));
  }
  return absl::StrCat("key 0x", absl::BytesToHexString(absl::string_view(key.data(), key.size())));
}

std::string EncodeState(const ObjectState& state) {
  const std::string key = ObjectKey(state.address);
  std::string out(kRecordHeaderBytes + state.payload.size() + kChecksumBytes, '\0');
  StoreLe<uint8_t>(out.data() + 0, kRecordFormat);
  StoreLe<uint8_t>(out.data() + 1, static_cast<uint8_t>(state.role));
  StoreLe<uint16_t>(out.data() + 2, state.txn_thread);
  StoreLe<uint32_t>(out.data() + 4, state.capacity);
  StoreLe<uint32_t>(out.data() + 8, state.incarnation);
  StoreLe<uint32_t>(out.data() + 12, state.flags);
  StoreLe<uint64_t>(out.data() + 16, state.version);
  StoreLe<uint64_t>(out.data() + 24, state.position);
  StoreLe<uint64_t>(out.data() + 32, state.txn_epoch);
  StoreLe<uint64_t>(out.data() + 40, state.txn_counter);
  StoreLe<uint32_t>(out.data() + 48, state.txn_node);
  StoreLe<uint32_t>(out.data() + 52, static_cast<uint32_t>(state.payload.size()));
  StoreLe<uint64_t>(out.data() + 56, state.log_epoch);
  if (!state.payload.empty()) std::memcpy(out.data() + kRecordHeaderBytes, state.payload.data(), state.payload.size());
  const size_t covered = kRecordHeaderBytes + state.payload.size();
  StoreLe<uint64_t>(out.data() + covered, Checksum(key, std::string_view(out.data(), covered)));
  return out;
}

absl::StatusOr<ObjectState> DecodeState(std::string_view key, std::string_view value) {
  if (key.size() != 9 || key[0] != 'o') return Damaged(key, "not an object key");
  if (value.empty()) return Damaged(key, "empty value");
  if (const uint8_t format = static_cast<uint8_t>(value[0]); format != kRecordFormat) {
    return UnknownFormat(key, format);
  }
  if (value.size() < kRecordHeaderBytes + kChecksumBytes) {
    return Damaged(key, absl::StrCat("truncated: ", value.size(), " bytes, a record has at least ",
                                     kRecordHeaderBytes + kChecksumBytes));
  }
  const uint32_t length = LoadLe<uint32_t>(value.data() + 52);
  if (uint64_t{length} + kRecordHeaderBytes + kChecksumBytes != value.size()) {
    return Damaged(key, absl::StrCat(value.size() < uint64_t{length} + kRecordHeaderBytes + kChecksumBytes
                                         ? "truncated: "
                                         : "wrong length: ",
                                     value.size(), " bytes, the record says ",
                                     uint64_t{length} + kRecordHeaderBytes + kChecksumBytes));
  }
  const size_t covered = kRecordHeaderBytes + length;
  const uint64_t stored = LoadLe<uint64_t>(value.data() + covered);
  const uint64_t computed = Checksum(key, value.substr(0, covered));
  if (stored != computed) {
    return Damaged(key, absl::StrFormat("checksum mismatch (stored %016x, computed %016x)", stored, computed));
  }
  // The checksum matched: what follows catches a writer's bug, not rot.
  ObjectState state;
  state.address = memory::GlobalAddress::FromRaw(BigEndianValue(key));
  const uint8_t role = LoadLe<uint8_t>(value.data() + 1);
  if (role != 1 && role != 2) return Damaged(key, absl::StrCat("unknown role ", role));
  state.role = static_cast<Role>(role);
  state.txn_thread = LoadLe<uint16_t>(value.data() + 2);
  state.capacity = LoadLe<uint32_t>(value.data() + 4);
  state.incarnation = LoadLe<uint32_t>(value.data() + 8);
  state.flags = LoadLe<uint32_t>(value.data() + 12);
  state.version = LoadLe<uint64_t>(value.data() + 16);
  state.position = LoadLe<uint64_t>(value.data() + 24);
  state.txn_epoch = LoadLe<uint64_t>(value.data() + 32);
  state.txn_counter = LoadLe<uint64_t>(value.data() + 40);
  state.txn_node = LoadLe<uint32_t>(value.data() + 48);
  state.log_epoch = LoadLe<uint64_t>(value.data() + 56);
  if (std::string problem = CheckFields(state, length); !problem.empty()) return Damaged(key, problem);
  state.payload.assign(value.data() + kRecordHeaderBytes, length);
  return state;
}

std::string EncodeMeta(std::string_view key, uint64_t value) {
  std::string out(1 + 8 + kChecksumBytes, '\0');
  StoreLe<uint8_t>(out.data() + 0, kRecordFormat);
  StoreLe<uint64_t>(out.data() + 1, value);
  StoreLe<uint64_t>(out.data() + 9, Checksum(key, std::string_view(out.data(), 9)));
  return out;
}

absl::StatusOr<uint64_t> DecodeMeta(std::string_view key, std::string_view value) {
  if (value.empty()) return Damaged(key, "empty value");
  if (const uint8_t format = static_cast<uint8_t>(value[0]); format != kRecordFormat) {
    return UnknownFormat(key, format);
  }
  if (value.size() != 1 + 8 + kChecksumBytes) {
    return Damaged(key, absl::StrCat(value.size() < 17 ? "truncated: " : "wrong length: ", value.size(),
                                     " bytes, a metadata value has 17"));
  }
  const uint64_t stored = LoadLe<uint64_t>(value.data() + 9);
  const uint64_t computed = Checksum(key, value.substr(0, 9));
  if (stored != computed) {
    return Damaged(key, absl::StrFormat("checksum mismatch (stored %016x, computed %016x)", stored, computed));
  }
  return LoadLe<uint64_t>(value.data() + 1);
}

std::string EncodeMembers(std::string_view key, const LoggedMembers& members) {
  const size_t body = 16 + 4 * members.ids.size();
  std::string out(body + kChecksumBytes, '\0');
  StoreLe<uint8_t>(out.data() + 0, kRecordFormat);
  StoreLe<uint32_t>(out.data() + 4, static_cast<uint32_t>(members.ids.size()));
  StoreLe<uint64_t>(out.data() + 8, members.configuration_epoch);
  for (size_t i = 0; i < members.ids.size(); ++i) StoreLe<uint32_t>(out.data() + 16 + 4 * i, members.ids[i]);
  StoreLe<uint64_t>(out.data() + body, Checksum(key, std::string_view(out.data(), body)));
  return out;
}

absl::StatusOr<LoggedMembers> DecodeMembers(std::string_view key, std::string_view value) {
  if (value.empty()) return Damaged(key, "empty value");
  if (const uint8_t format = static_cast<uint8_t>(value[0]); format != kRecordFormat) {
    return UnknownFormat(key, format);
  }
  if (value.size() < 16 + kChecksumBytes) {
    return Damaged(key, absl::StrCat("truncated: ", value.size(), " bytes, a member list has at least 24"));
  }
  const uint32_t count = LoadLe<uint32_t>(value.data() + 4);
  const size_t body = 16 + 4 * static_cast<size_t>(count);
  if (count == 0 || count > 65535 || value.size() != body + kChecksumBytes) {
    return Damaged(key, absl::StrCat("wrong length: ", value.size(), " bytes for ", count, " members"));
  }
  const uint64_t stored = LoadLe<uint64_t>(value.data() + body);
  const uint64_t computed = Checksum(key, value.substr(0, body));
  if (stored != computed) {
    return Damaged(key, absl::StrFormat("checksum mismatch (stored %016x, computed %016x)", stored, computed));
  }
  if (value[1] != 0 || value[2] != 0 || value[3] != 0) return Damaged(key, "reserved bytes set");
  LoggedMembers members;
  members.configuration_epoch = LoadLe<uint64_t>(value.data() + 8);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t id = LoadLe<uint32_t>(value.data() + 16 + 4 * i);
    if (id == 0 || id > 65535 || (!members.ids.empty() && id <= members.ids.back())) {
      return Damaged(key, absl::StrCat("member ", id, " out of order or range"));
    }
    members.ids.push_back(id);
  }
  return members;
}

//  Segment value                 (little-endian)
//   0     1    format          kRecordFormat
//   1     3    reserved        zero
//   4     4    count           states that follow
//   8     8    first position  = the key's
//  16     8    last position   >= first
//  24     ...  count entries:
//              0  8 address, 8 1 role, 9 1 reserved (0), 10 2 txn thread, 12 4 capacity, 16 4 incarnation,
//              20 4 flags, 24 8 version, 32 8 position, 40 8 txn epoch, 48 8 txn counter, 56 4 txn node,
//              60 4 payload length, 64 8 log epoch, 72 n payload
//  end    8    checksum        XXH3-64 of key bytes, then value bytes [0, end)
SegmentEncoder::SegmentEncoder(uint64_t first_position) : first_(first_position) {
  out_.resize(kSegmentHeaderBytes);
  StoreLe<uint8_t>(out_.data() + 0, kRecordFormat);
  StoreLe<uint64_t>(out_.data() + 8, first_);
}

void SegmentEncoder::Add(const ObjectState& state) {
  const size_t at = out_.size();
  out_.resize(at + kSegmentEntryBytes + state.payload.size());
  StoreLe<uint64_t>(out_.data() + at, state.address.raw());
  StoreLe<uint8_t>(out_.data() + at + 8, static_cast<uint8_t>(state.role));
  StoreLe<uint8_t>(out_.data() + at + 9, 0);
  StoreLe<uint16_t>(out_.data() + at + 10, state.txn_thread);
  StoreLe<uint32_t>(out_.data() + at + 12, state.capacity);
  StoreLe<uint32_t>(out_.data() + at + 16, state.incarnation);
  StoreLe<uint32_t>(out_.data() + at + 20, state.flags);
  StoreLe<uint64_t>(out_.data() + at + 24, state.version);
  StoreLe<uint64_t>(out_.data() + at + 32, state.position);
  StoreLe<uint64_t>(out_.data() + at + 40, state.txn_epoch);
  StoreLe<uint64_t>(out_.data() + at + 48, state.txn_counter);
  StoreLe<uint32_t>(out_.data() + at + 56, state.txn_node);
  StoreLe<uint32_t>(out_.data() + at + 60, static_cast<uint32_t>(state.payload.size()));
  StoreLe<uint64_t>(out_.data() + at + 64, state.log_epoch);
  if (!state.payload.empty()) std::memcpy(out_.data() + at + kSegmentEntryBytes, state.payload.data(), state.payload.size());
  ++count_;
}

std::string SegmentEncoder::Finish(uint64_t last_position) {
  StoreLe<uint32_t>(out_.data() + 4, count_);
  StoreLe<uint64_t>(out_.data() + 16, last_position);
  const std::string key = SegmentKey(first_);
  const uint64_t checksum = Checksum(key, out_);
  out_.resize(out_.size() + kChecksumBytes);
  StoreLe<uint64_t>(out_.data() + out_.size() - kChecksumBytes, checksum);
  return std::move(out_);
}

absl::StatusOr<Segment> DecodeSegment(std::string_view key, std::string_view value) {
  if (key.size() != 9 || key[0] != 's') return Damaged(key, "not a segment key");
  if (value.empty()) return Damaged(key, "empty value");
  if (const uint8_t format = static_cast<uint8_t>(value[0]); format != kRecordFormat) {
    return UnknownFormat(key, format);
  }
  if (value.size() < kSegmentHeaderBytes + kChecksumBytes) {
    return Damaged(key, absl::StrCat("truncated: ", value.size(), " bytes, a segment has at least ",
                                     kSegmentHeaderBytes + kChecksumBytes));
  }
  // The checksum first: every length inside is trusted only once it matched.
  const size_t covered = value.size() - kChecksumBytes;
  const uint64_t stored = LoadLe<uint64_t>(value.data() + covered);
  const uint64_t computed = Checksum(key, value.substr(0, covered));
  if (stored != computed) {
    return Damaged(key, absl::StrFormat("checksum mismatch (stored %016x, computed %016x; truncated or damaged)",
                                        stored, computed));
  }
  if (LoadLe<uint8_t>(value.data() + 1) != 0 || LoadLe<uint16_t>(value.data() + 2) != 0) return Damaged(key, "reserved bytes set");
  Segment segment;
  const uint32_t count = LoadLe<uint32_t>(value.data() + 4);
  segment.first = LoadLe<uint64_t>(value.data() + 8);
  segment.last = LoadLe<uint64_t>(value.data() + 16);
  if (segment.first != BigEndianValue(key)) {
    return Damaged(key, absl::StrCat("the value is the segment from position ", segment.first));
  }
  if (segment.first == 0 || segment.last < segment.first) {
    return Damaged(key, absl::StrCat("positions ", segment.first, "..", segment.last));
  }
  if (count > segment.last - segment.first + 1) {
    return Damaged(key, absl::StrCat(count, " states for positions ", segment.first, "..", segment.last));
  }
  segment.states.reserve(count);
  size_t at = kSegmentHeaderBytes;
  uint64_t previous = segment.first - 1;
  for (uint32_t i = 0; i < count; ++i) {
    if (covered - at < kSegmentEntryBytes) {
      return Damaged(key, absl::StrCat("state ", i, " of ", count, " is cut short at byte ", at));
    }
    ObjectState state;
    state.address = memory::GlobalAddress::FromRaw(LoadLe<uint64_t>(value.data() + at));
    const uint8_t role = LoadLe<uint8_t>(value.data() + at + 8);
    if (role != 1 && role != 2) return Damaged(key, absl::StrCat("state ", i, ": unknown role ", role));
    if (LoadLe<uint8_t>(value.data() + at + 9) != 0) return Damaged(key, absl::StrCat("state ", i, ": reserved byte set"));
    state.role = static_cast<Role>(role);
    state.txn_thread = LoadLe<uint16_t>(value.data() + at + 10);
    state.capacity = LoadLe<uint32_t>(value.data() + at + 12);
    state.incarnation = LoadLe<uint32_t>(value.data() + at + 16);
    state.flags = LoadLe<uint32_t>(value.data() + at + 20);
    state.version = LoadLe<uint64_t>(value.data() + at + 24);
    state.position = LoadLe<uint64_t>(value.data() + at + 32);
    state.txn_epoch = LoadLe<uint64_t>(value.data() + at + 40);
    state.txn_counter = LoadLe<uint64_t>(value.data() + at + 48);
    state.txn_node = LoadLe<uint32_t>(value.data() + at + 56);
    const uint32_t length = LoadLe<uint32_t>(value.data() + at + 60);
    state.log_epoch = LoadLe<uint64_t>(value.data() + at + 64);
    if (std::string problem = CheckFields(state, length); !problem.empty()) {
      return Damaged(key, absl::StrCat("state ", i, " (", state.address.ToString(), "): ", problem));
    }
    if (state.position <= previous || state.position > segment.last) {
      return Damaged(key, absl::StrCat("state ", i, " at position ", state.position, ", after ", previous,
                                       " in a segment of positions ", segment.first, "..", segment.last));
    }
    previous = state.position;
    if (covered - at - kSegmentEntryBytes < length) {
      return Damaged(key, absl::StrCat("state ", i, " of ", count, ": a payload of ", length,
                                       " bytes runs past the end"));
    }
    state.payload.assign(value.data() + at + kSegmentEntryBytes, length);
    at += kSegmentEntryBytes + length;
    segment.states.push_back(std::move(state));
  }
  if (at != covered) return Damaged(key, absl::StrCat(covered - at, " bytes after the last state"));
  return segment;
}

}  // namespace fathom::logging
