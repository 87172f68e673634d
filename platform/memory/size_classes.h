// Slot size classes: powers of two from 64 B to 1 MiB.
#ifndef FATHOM_PLATFORM_MEMORY_SIZE_CLASSES_H_
#define FATHOM_PLATFORM_MEMORY_SIZE_CLASSES_H_

#include <bit>
#include <cstdint>

namespace fathom::memory {

inline constexpr uint32_t kMinSlotBytes = 64;  // one cache line
inline constexpr uint32_t kMaxSlotBytes = 1u << 20;
inline constexpr int kNumSizeClasses = 15;  // 64 B, 128 B, ..., 1 MiB

inline constexpr uint32_t SlotBytes(int size_class) { return kMinSlotBytes << size_class; }

// The smallest class holding `bytes`; -1 if bytes is 0 or over kMaxSlotBytes.
inline constexpr int SizeClassFor(uint64_t bytes) {
  if (bytes == 0 || bytes > kMaxSlotBytes) return -1;
  if (bytes <= kMinSlotBytes) return 0;
  return std::bit_width(bytes - 1) - std::bit_width(uint64_t{kMinSlotBytes} - 1);
}

static_assert(SizeClassFor(1) == 0 && SizeClassFor(64) == 0 && SizeClassFor(65) == 1);
static_assert(SizeClassFor(kMaxSlotBytes) == kNumSizeClasses - 1 && SizeClassFor(kMaxSlotBytes + 1) == -1);
static_assert(SlotBytes(kNumSizeClasses - 1) == kMaxSlotBytes);

}  // namespace fathom::memory

#endif  // FATHOM_PLATFORM_MEMORY_SIZE_CLASSES_H_
