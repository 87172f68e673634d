// Checking a copy of an object: the one rule every reader applies, local or remote.
//
//   std::vector<std::byte> copy(ref.capacity);
//   ... one-sided read of ref.capacity bytes at ref.address into copy ...
//   ObjectCheck check = CheckObjectCopy(copy, ref);
//   if (check.verdict == Verdict::kValid) use(check.payload);
//   else if (IsRetryable(check.verdict)) read again (with backoff)
//   else fail with check.status
#ifndef FATHOM_PLATFORM_OBJECT_OBJECT_CODEC_H_
#define FATHOM_PLATFORM_OBJECT_OBJECT_CODEC_H_

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "platform/object/object_layout.h"

namespace fathom::object {

enum class Verdict {
  kValid,       // unlocked, checksum matches, the incarnation and capacity are the ones expected, live
  kLocked,      // a writer holds the lock: retry
  kTorn,        // the checksum does not match (bytes of two writes, or in flight): retry
  kStale,       // a consistent copy of another incarnation, or a freed slot: the reference is dead
  kWrongShape,  // a consistent copy whose capacity is not the reference's: the reference is wrong
};

inline bool IsRetryable(Verdict v) { return v == Verdict::kLocked || v == Verdict::kTorn; }

struct ObjectCheck {
  Verdict verdict = Verdict::kTorn;
  ObjectHeader header;                // meaningful when the checksum matched
  std::span<const std::byte> payload;  // valid only for kValid
};

// Decodes the header fields of `bytes` (at least kHeaderBytes). No validation.
ObjectHeader DecodeHeader(std::span<const std::byte> bytes);

// The checksum a header with these fields (version unlocked) and this payload must carry.
uint64_t ComputeChecksum(uint64_t version, uint32_t incarnation, uint32_t capacity, uint32_t flags,
                         std::span<const std::byte> payload);

// Checks a copy of `ref.capacity` bytes read from `ref.address`. A copy shorter than the reference says,
// or shorter than a header, is kTorn.
ObjectCheck CheckObjectCopy(std::span<const std::byte> copy, const ObjectRef& ref);

// The status a caller reports for a verdict that is not kValid.
absl::Status VerdictStatus(Verdict verdict, const ObjectRef& ref);

}  // namespace fathom::object

#endif  // FATHOM_PLATFORM_OBJECT_OBJECT_CODEC_H_
