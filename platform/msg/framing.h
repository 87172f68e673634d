// Ring framing: the bytes of one record (a message, or the padding that wraps a ring) and of the credit
// record a receiver writes back to its sender. Pure functions; the layout is docs/formats/ring.md.
//
//   std::byte buf[RecordSpan(5)];
//   EncodeMessage(buf, session, /*seq=*/1, /*position=*/0, /*type=*/7, "hello");
//   absl::StatusOr<DecodedRecord> r = DecodeRecord(AsView(buf, sizeof buf), session, max_payload);
//
// A record is 8-byte aligned: a 32-byte header, then the payload, then zero filler up to the next multiple
// of 8. Its checksum (XXH3-64 seeded with the ring's session) covers every header field after itself and
// the payload, so a record whose bytes landed in any order, or only partly, does not verify.
#ifndef FATHOM_PLATFORM_MSG_FRAMING_H_
#define FATHOM_PLATFORM_MSG_FRAMING_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"

namespace fathom::msg {

inline constexpr size_t kRecordHeaderSize = 32;
inline constexpr size_t kRecordAlignment = 8;
// Type 0 marks padding; message types are 1..65535.
inline constexpr uint16_t kPaddingType = 0;
inline constexpr size_t kCreditRecordSize = 16;

constexpr size_t AlignRecord(size_t n) { return (n + kRecordAlignment - 1) & ~(kRecordAlignment - 1); }
// Bytes a record with `payload_length` bytes of payload occupies in a ring.
constexpr size_t RecordSpan(size_t payload_length) { return kRecordHeaderSize + AlignRecord(payload_length); }

struct RecordHeader {
  uint64_t checksum = 0;  // XXH3-64(seed = session) of bytes [8, 32 + covered payload)
  uint64_t seq = 0;       // 1 for a ring's first record, +1 per record (padding included)
  uint64_t position = 0;  // absolute byte position of the record in the ring's stream
  uint32_t length = 0;    // payload bytes; for padding, the bytes after the header up to the ring's end
  uint16_t type = 0;      // kPaddingType or a message type
  uint16_t reserved = 0;  // zero

  bool is_padding() const { return type == kPaddingType; }
  // Payload bytes the checksum covers: none for padding (its body is never written).
  size_t covered() const { return is_padding() ? 0 : length; }
};

// Reads the header fields at `bytes` (32 bytes); checks nothing.
RecordHeader LoadHeader(const std::byte* bytes);

// The checksum a record at `record` should carry, given how many payload bytes it covers.
// REQUIRES: `record` has 32 + covered_payload bytes.
uint64_t RecordChecksum(const std::byte* record, size_t covered_payload, uint64_t session);

// Writes a message record (header, payload = head followed by body, zero filler) at `out`, which has
// RecordSpan(head.size() + body.size()) bytes. REQUIRES: type != kPaddingType, payload < 4 GiB.
void EncodeMessage(std::byte* out, uint64_t session, uint64_t seq, uint64_t position, uint16_t type,
                   std::string_view head, std::string_view body = {});

// Writes the 32-byte header of a padding record that covers `span` bytes (>= 32, a multiple of 8).
void EncodePadding(std::byte* out, uint64_t session, uint64_t seq, uint64_t position, size_t span);

struct DecodedRecord {
  RecordHeader header;
  std::string_view payload;  // empty for padding
  size_t span = 0;           // bytes the record occupies: RecordSpan(length) (for padding, 32 + length)
};

// Decodes the record at the start of `bytes`, which may continue past it. Never reads outside `bytes`.
//   InvalidArgument: fewer than 32 bytes; a message longer than `max_payload`; a message whose payload
//                    runs past the end of `bytes` (truncated); reserved bits set.
//   DataLoss:        checksum mismatch.
// A padding record needs only its 32 header bytes; its length is not checked here (the ring knows it).
absl::StatusOr<DecodedRecord> DecodeRecord(std::string_view bytes, uint64_t session, uint32_t max_payload);

// The credit record: the receiver's consumed position (its "head") and a check, so that a torn or
// half-written credit is never believed.
void EncodeCredit(std::byte* out, uint64_t session, uint64_t head);
// The head, or nullopt if the 16 bytes at `bytes` are not a valid credit record of this session.
std::optional<uint64_t> DecodeCredit(const std::byte* bytes, uint64_t session);

inline std::string_view AsView(const std::byte* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_FRAMING_H_
