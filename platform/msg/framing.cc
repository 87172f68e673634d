#include "platform/msg/framing.h"

#include <xxhash.h>

#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/base/byte_order.h"

namespace fathom::msg {

namespace {

// Separates the credit record's hash domain from the records' one: a credit is never a valid record.
constexpr uint64_t kCreditSalt = 0x4352454449543031;  // "CREDIT01"

void StoreHeaderFields(std::byte* out, uint64_t seq, uint64_t position, uint32_t length, uint16_t type) {
  StoreLe<uint64_t>(out + 8, seq);
  StoreLe<uint64_t>(out + 16, position);
  StoreLe<uint32_t>(out + 24, length);
  StoreLe<uint16_t>(out + 28, type);
  StoreLe<uint16_t>(out + 30, 0);
}

}  // namespace

RecordHeader LoadHeader(const std::byte* bytes) {
  RecordHeader h;
  h.checksum = LoadLe<uint64_t>(bytes);
  h.seq = LoadLe<uint64_t>(bytes + 8);
  h.position = LoadLe<uint64_t>(bytes + 16);
  h.length = LoadLe<uint32_t>(bytes + 24);
  h.type = LoadLe<uint16_t>(bytes + 28);
  h.reserved = LoadLe<uint16_t>(bytes + 30);
  return h;
}

uint64_t RecordChecksum(const std::byte* record, size_t covered_payload, uint64_t session) {
  return XXH3_64bits_withSeed(record + 8, kRecordHeaderSize - 8 + covered_payload, session);
}

void EncodeMessage(std::byte* out, uint64_t session, uint64_t seq, uint64_t position, uint16_t type,
                   std::string_view head, std::string_view body) {
  const size_t length = head.size() + body.size();
  StoreHeaderFields(out, seq, position, static_cast<uint32_t>(length), type);
  std::byte* payload = out + kRecordHeaderSize;
  if (!head.empty()) std::memcpy(payload, head.data(), head.size());
  if (!body.empty()) std::memcpy(payload + head.size(), body.data(), body.size());
  // Zero filler: never ship stale bytes of a reused buffer.
  std::memset(payload + length, 0, AlignRecord(length) - length);
  StoreLe<uint64_t>(out, RecordChecksum(out, length, session));
}

void EncodePadding(std::byte* out, uint64_t session, uint64_t seq, uint64_t position, size_t span) {
  StoreHeaderFields(out, seq, position, static_cast<uint32_t>(span - kRecordHeaderSize), kPaddingType);
  StoreLe<uint64_t>(out, RecordChecksum(out, 0, session));
}

absl::StatusOr<DecodedRecord> DecodeRecord(std::string_view bytes, uint64_t session, uint32_t max_payload) {
  if (bytes.size() < kRecordHeaderSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("ring record: truncated header (", bytes.size(), " of ", kRecordHeaderSize, " bytes)"));
  }
  const std::byte* data = reinterpret_cast<const std::byte*>(bytes.data());
  DecodedRecord r;
  r.header = LoadHeader(data);
  if (r.header.reserved != 0) return absl::InvalidArgumentError("ring record: reserved bits set");
  if (r.header.is_padding()) {
    r.span = kRecordHeaderSize + uint64_t{r.header.length};
  } else {
    if (r.header.length > max_payload) {
      return absl::InvalidArgumentError(
          absl::StrCat("ring record: length ", r.header.length, " exceeds the maximum ", max_payload));
    }
    r.span = RecordSpan(r.header.length);
    if (kRecordHeaderSize + uint64_t{r.header.length} > bytes.size()) {
      return absl::InvalidArgumentError(absl::StrCat("ring record: truncated (length ", r.header.length,
                                                     ", only ", bytes.size() - kRecordHeaderSize,
                                                     " payload bytes present)"));
    }
  }
  if (RecordChecksum(data, r.header.covered(), session) != r.header.checksum) {
    return absl::DataLossError(absl::StrCat("ring record: checksum mismatch (seq ", r.header.seq, ")"));
  }
  r.payload = bytes.substr(kRecordHeaderSize, r.header.covered());
  return r;
}

void EncodeCredit(std::byte* out, uint64_t session, uint64_t head) {
  StoreLe<uint64_t>(out, head);
  StoreLe<uint64_t>(out + 8, XXH3_64bits_withSeed(out, 8, session ^ kCreditSalt));
}

std::optional<uint64_t> DecodeCredit(const std::byte* bytes, uint64_t session) {
  if (XXH3_64bits_withSeed(bytes, 8, session ^ kCreditSalt) != LoadLe<uint64_t>(bytes + 8)) return std::nullopt;
  return LoadLe<uint64_t>(bytes);
}

}  // namespace fathom::msg
