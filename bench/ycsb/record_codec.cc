#include "bench/ycsb/record_codec.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "platform/base/byte_order.h"

namespace fathom::ycsb {
namespace {

void PutU32(std::string* out, uint32_t v) { AppendU32(*out, v); }

bool GetU32(std::string_view* in, uint32_t* v) {
  if (in->size() < 4) return false;
  *v = LoadU32(in->data());
  in->remove_prefix(4);
  return true;
}

bool GetBytes(std::string_view* in, std::string* out) {
  uint32_t length;
  if (!GetU32(in, &length) || in->size() < length) return false;
  out->assign(in->data(), length);
  in->remove_prefix(length);
  return true;
}

}  // namespace

std::string EncodeRecord(const Record& record) {
  std::string out;
  size_t size = 4;
  for (const auto& [name, value] : record) size += 8 + name.size() + value.size();
  out.reserve(size);
  PutU32(&out, static_cast<uint32_t>(record.size()));
  for (const auto& [name, value] : record) {
    PutU32(&out, static_cast<uint32_t>(name.size()));
    out += name;
    PutU32(&out, static_cast<uint32_t>(value.size()));
    out += value;
  }
  return out;
}

absl::StatusOr<Record> DecodeRecord(std::string_view bytes) {
  uint32_t field_count;
  if (!GetU32(&bytes, &field_count)) return absl::DataLossError("record shorter than its field count");
  // Each field needs at least 8 bytes of lengths: reject impossible counts before looping.
  if (field_count > bytes.size() / 8) {
    return absl::DataLossError(absl::StrCat("record claims ", field_count, " fields in ", bytes.size(), " bytes"));
  }
  Record record;
  for (uint32_t i = 0; i < field_count; ++i) {
    std::string name, value;
    if (!GetBytes(&bytes, &name) || !GetBytes(&bytes, &value)) {
      return absl::DataLossError(absl::StrCat("record truncated in field ", i));
    }
    if (!record.emplace(std::move(name), std::move(value)).second) {
      return absl::DataLossError(absl::StrCat("record repeats a field name at field ", i));
    }
  }
  if (!bytes.empty()) return absl::DataLossError(absl::StrCat("record has ", bytes.size(), " trailing bytes"));
  return record;
}

}  // namespace fathom::ycsb
