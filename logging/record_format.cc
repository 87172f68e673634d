#include "logging/record_format.h"

// The streaming state on the stack needs the struct definition.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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
//  56     n    payload
//  56+n   8    checksum        XXH3-64 of key bytes, then value bytes [0, 56+n)
constexpr uint64_t kMaxVersion = (uint64_t{1} << 63) - 1;
constexpr size_t kObjectHeaderBytes = 32;  // object::kHeaderBytes (the slot's own header)

template <typename T>
void Put(std::string& out, size_t at, T value) {
  std::memcpy(out.data() + at, &value, sizeof value);
}
template <typename T>
T Get(std::string_view in, size_t at) {
  T value;
  std::memcpy(&value, in.data() + at, sizeof value);
  return value;
}

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

std::string ObjectKey(memory::GlobalAddress address) {
  std::string key(9, '\0');
  key[0] = 'o';
  const uint64_t raw = address.raw();
  for (int i = 0; i < 8; ++i) key[1 + i] = static_cast<char>(raw >> (56 - 8 * i));
  return key;
}

std::string DescribeKey(std::string_view key) {
  if (key.size() == 9 && key[0] == 'o') {
    uint64_t raw = 0;
    for (int i = 0; i < 8; ++i) raw = raw << 8 | static_cast<uint8_t>(key[1 + i]);
    return absl::StrCat("object ", memory::GlobalAddress::FromRaw(raw).ToString());
  }
  if (key == std::string_view(kNodeKey) || key == std::string_view(kPositionKey) || key == std::string_view(kGapKey)) return absl::StrCat("meta ", std::string(key));
  return absl::StrCat("key 0x", absl::BytesToHexString(absl::string_view(key.data(), key.size())));
}

std::string EncodeState(const ObjectState& state) {
  const std::string key = ObjectKey(state.address);
  std::string out(kRecordHeaderBytes + state.payload.size() + kChecksumBytes, '\0');
  Put<uint8_t>(out, 0, kRecordFormat);
  Put<uint8_t>(out, 1, static_cast<uint8_t>(state.role));
  Put<uint16_t>(out, 2, state.txn_thread);
  Put<uint32_t>(out, 4, state.capacity);
  Put<uint32_t>(out, 8, state.incarnation);
  Put<uint32_t>(out, 12, state.flags);
  Put<uint64_t>(out, 16, state.version);
  Put<uint64_t>(out, 24, state.position);
  Put<uint64_t>(out, 32, state.txn_epoch);
  Put<uint64_t>(out, 40, state.txn_counter);
  Put<uint32_t>(out, 48, state.txn_node);
  Put<uint32_t>(out, 52, static_cast<uint32_t>(state.payload.size()));
  if (!state.payload.empty()) std::memcpy(out.data() + kRecordHeaderBytes, state.payload.data(), state.payload.size());
  const size_t covered = kRecordHeaderBytes + state.payload.size();
  Put<uint64_t>(out, covered, Checksum(key, std::string_view(out.data(), covered)));
  return out;
}

absl::StatusOr<ObjectState> DecodeState(std::string_view key, std::string_view value) {
  if (key.size() != 9 || key[0] != 'o') return Damaged(key, "not an object key");
  if (value.empty()) return Damaged(key, "empty value");
  if (const uint8_t format = static_cast<uint8_t>(value[0]); format != kRecordFormat) {
    return absl::FailedPreconditionError(absl::StrCat(DescribeKey(key), ": record format version ", format,
                                                      ", this build reads only ", kRecordFormat));
  }
  if (value.size() < kRecordHeaderBytes + kChecksumBytes) {
    return Damaged(key, absl::StrCat("truncated: ", value.size(), " bytes, a record has at least ",
                                     kRecordHeaderBytes + kChecksumBytes));
  }
  const uint32_t length = Get<uint32_t>(value, 52);
  if (uint64_t{length} + kRecordHeaderBytes + kChecksumBytes != value.size()) {
    return Damaged(key, absl::StrCat(value.size() < uint64_t{length} + kRecordHeaderBytes + kChecksumBytes
                                         ? "truncated: "
                                         : "wrong length: ",
                                     value.size(), " bytes, the record says ",
                                     uint64_t{length} + kRecordHeaderBytes + kChecksumBytes));
  }
  const size_t covered = kRecordHeaderBytes + length;
  const uint64_t stored = Get<uint64_t>(value, covered);
  const uint64_t computed = Checksum(key, value.substr(0, covered));
  if (stored != computed) {
    return Damaged(key, absl::StrFormat("checksum mismatch (stored %016x, computed %016x)", stored, computed));
  }
  // The checksum matched: what follows catches a writer's bug, not rot.
  ObjectState state;
  uint64_t raw = 0;
  for (int i = 0; i < 8; ++i) raw = raw << 8 | static_cast<uint8_t>(key[1 + i]);
  state.address = memory::GlobalAddress::FromRaw(raw);
  const uint8_t role = Get<uint8_t>(value, 1);
  if (role != 1 && role != 2) return Damaged(key, absl::StrCat("unknown role ", role));
  state.role = static_cast<Role>(role);
  state.txn_thread = Get<uint16_t>(value, 2);
  state.capacity = Get<uint32_t>(value, 4);
  state.incarnation = Get<uint32_t>(value, 8);
  state.flags = Get<uint32_t>(value, 12);
  state.version = Get<uint64_t>(value, 16);
  state.position = Get<uint64_t>(value, 24);
  state.txn_epoch = Get<uint64_t>(value, 32);
  state.txn_counter = Get<uint64_t>(value, 40);
  state.txn_node = Get<uint32_t>(value, 48);
  if ((state.flags & ~uint32_t{1}) != 0) return Damaged(key, absl::StrFormat("unknown flags 0x%x", state.flags));
  if (state.version > kMaxVersion) return Damaged(key, absl::StrCat("version ", state.version, " out of range"));
  if (state.capacity < kObjectHeaderBytes || state.capacity % 8 != 0 ||
      uint64_t{length} > state.capacity - kObjectHeaderBytes) {
    return Damaged(key, absl::StrCat("payload of ", length, " bytes in a slot of ", state.capacity));
  }
  if (state.position == 0) return Damaged(key, "position 0");
  state.payload.assign(value.data() + kRecordHeaderBytes, length);
  return state;
}

std::string EncodeMeta(std::string_view key, uint64_t value) {
  std::string out(1 + 8 + kChecksumBytes, '\0');
  Put<uint8_t>(out, 0, kRecordFormat);
  Put<uint64_t>(out, 1, value);
  Put<uint64_t>(out, 9, Checksum(key, std::string_view(out.data(), 9)));
  return out;
}

absl::StatusOr<uint64_t> DecodeMeta(std::string_view key, std::string_view value) {
  if (value.empty()) return Damaged(key, "empty value");
  if (const uint8_t format = static_cast<uint8_t>(value[0]); format != kRecordFormat) {
    return absl::FailedPreconditionError(absl::StrCat(DescribeKey(key), ": record format version ", format,
                                                      ", this build reads only ", kRecordFormat));
  }
  if (value.size() != 1 + 8 + kChecksumBytes) {
    return Damaged(key, absl::StrCat(value.size() < 17 ? "truncated: " : "wrong length: ", value.size(),
                                     " bytes, a metadata value has 17"));
  }
  const uint64_t stored = Get<uint64_t>(value, 9);
  const uint64_t computed = Checksum(key, value.substr(0, 9));
  if (stored != computed) {
    return Damaged(key, absl::StrFormat("checksum mismatch (stored %016x, computed %016x)", stored, computed));
  }
  return Get<uint64_t>(value, 1);
}

}  // namespace fathom::logging
