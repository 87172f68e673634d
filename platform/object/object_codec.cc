#include "platform/object/object_codec.h"

// The streaming state on the stack needs the struct definition.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/base/byte_order.h"

namespace fathom::object {
namespace {


}  // namespace

ObjectHeader DecodeHeader(std::span<const std::byte> bytes) {
  ObjectHeader h;
  h.checksum = LoadLe<uint64_t>(bytes.data() + kChecksumOffset);
  h.version_word = LoadLe<uint64_t>(bytes.data() + kVersionOffset);
  h.incarnation = LoadLe<uint32_t>(bytes.data() + kIncarnationOffset);
  h.payload_length = LoadLe<uint32_t>(bytes.data() + kLengthOffset);
  h.capacity = LoadLe<uint32_t>(bytes.data() + kCapacityOffset);
  h.flags = LoadLe<uint32_t>(bytes.data() + kFlagsOffset);
  return h;
}

uint64_t ComputeChecksum(uint64_t version, uint32_t incarnation, uint32_t capacity, uint32_t flags,
                         std::span<const std::byte> payload) {
  // Bytes [8, 32) exactly as stored, then the payload: the same bytes a reader hashes in one call.
  std::byte header[kHeaderBytes - kVersionOffset];
  const uint64_t version_word = version & kVersionMask;
  const uint32_t length = static_cast<uint32_t>(payload.size());
  std::memcpy(header + 0, &version_word, 8);
  std::memcpy(header + 8, &incarnation, 4);
  std::memcpy(header + 12, &length, 4);
  std::memcpy(header + 16, &capacity, 4);
  std::memcpy(header + 20, &flags, 4);
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, header, sizeof header);
  XXH3_64bits_update(&state, payload.data(), payload.size());
  return XXH3_64bits_digest(&state);
}

ObjectCheck CheckObjectCopy(std::span<const std::byte> copy, const ObjectRef& ref) {
  ObjectCheck check;
  if (copy.size() < kHeaderBytes || copy.size() < ref.capacity) return check;  // kTorn
  check.header = DecodeHeader(copy);
  if (check.header.locked()) {
    check.verdict = Verdict::kLocked;
    return check;
  }
  // A length that cannot fit is a torn header (or garbage): never hash past the copy.
  if (check.header.payload_length > copy.size() - kHeaderBytes) return check;
  const size_t covered = kHeaderBytes - kVersionOffset + check.header.payload_length;
  if (XXH3_64bits(copy.data() + kVersionOffset, covered) != check.header.checksum) return check;
  // From here on the header is one writer's consistent output.
  if (check.header.capacity != ref.capacity) {
    check.verdict = Verdict::kWrongShape;
    return check;
  }
  if (check.header.incarnation != ref.incarnation || !check.header.live()) {
    check.verdict = Verdict::kStale;
    return check;
  }
  check.verdict = Verdict::kValid;
  check.payload = copy.subspan(kHeaderBytes, check.header.payload_length);
  return check;
}

absl::Status VerdictStatus(Verdict verdict, const ObjectRef& ref) {
  const std::string where = absl::StrCat("object ", ref.address.ToString(), " incarnation ", ref.incarnation);
  switch (verdict) {
    case Verdict::kValid:
      return absl::OkStatus();
    case Verdict::kLocked:
      return absl::UnavailableError(absl::StrCat(where, ": still locked after retries"));
    case Verdict::kTorn:
      return absl::UnavailableError(absl::StrCat(where, ": no consistent copy after retries"));
    case Verdict::kStale:
      return absl::NotFoundError(absl::StrCat(where, ": freed or reused (stale reference)"));
    case Verdict::kWrongShape:
      return absl::FailedPreconditionError(absl::StrCat(where, ": slot size differs from the reference"));
  }
  return absl::InternalError("unknown verdict");
}

}  // namespace fathom::object
