#include "bench/ycsb/record_codec.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fathom::ycsb {
namespace {

// LEB128: seven bits per byte, low first, the high bit set on every byte but the last.
void PutVarint(std::string* out, uint32_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

size_t VarintBytes(uint32_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// False for a truncated varint, one longer than 5 bytes or above 2^32 - 1, or one not in its shortest
// form (each record has exactly one encoding).
bool GetVarint(std::string_view* in, uint32_t* v) {
  uint64_t value = 0;
  for (size_t i = 0; i < 5 && i < in->size(); ++i) {
    const uint8_t byte = static_cast<uint8_t>((*in)[i]);
    value |= uint64_t{byte & 0x7fu} << (7 * i);
    if ((byte & 0x80) != 0) continue;
    if (value > UINT32_MAX || (i > 0 && byte == 0)) return false;
    *v = static_cast<uint32_t>(value);
    in->remove_prefix(i + 1);
    return true;
  }
  return false;
}

bool GetBytes(std::string_view* in, std::string* out) {
  uint32_t length;
  if (!GetVarint(in, &length) || in->size() < length) return false;
  out->assign(in->data(), length);
  in->remove_prefix(length);
  return true;
}

}  // namespace

std::string EncodeRecord(const Record& record) {
  std::string out;
  size_t size = VarintBytes(static_cast<uint32_t>(record.size()));
  for (const auto& [name, value] : record) {
    size += VarintBytes(static_cast<uint32_t>(name.size())) + name.size() +
            VarintBytes(static_cast<uint32_t>(value.size())) + value.size();
  }
  out.reserve(size);
  PutVarint(&out, static_cast<uint32_t>(record.size()));
  for (const auto& [name, value] : record) {
    PutVarint(&out, static_cast<uint32_t>(name.size()));
    out += name;
    PutVarint(&out, static_cast<uint32_t>(value.size()));
    out += value;
  }
  return out;
}

absl::StatusOr<Record> DecodeRecord(std::string_view bytes) {
  uint32_t field_count;
  if (!GetVarint(&bytes, &field_count)) return absl::DataLossError("record without a valid field count");
  // Each field needs at least 2 bytes of lengths: reject impossible counts before looping.
  if (field_count > bytes.size() / 2) {
    return absl::DataLossError(absl::StrCat("record claims ", field_count, " fields in ", bytes.size(), " bytes"));
  }
  Record record;
  for (uint32_t i = 0; i < field_count; ++i) {
    std::string name, value;
    if (!GetBytes(&bytes, &name) || !GetBytes(&bytes, &value)) {
      return absl::DataLossError(absl::StrCat("record truncated or malformed in field ", i));
    }
    // Encoded in name order, so each field goes at the end: one comparison instead of a walk down the
    // tree (the driver decodes every record it reads). Out of order, the hint is ignored.
    const size_t fields_before = record.size();
    record.emplace_hint(record.end(), std::move(name), std::move(value));
    if (record.size() == fields_before) {
      return absl::DataLossError(absl::StrCat("record repeats a field name at field ", i));
    }
  }
  if (!bytes.empty()) return absl::DataLossError(absl::StrCat("record has ", bytes.size(), " trailing bytes"));
  return record;
}

}  // namespace fathom::ycsb
