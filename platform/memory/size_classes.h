// Slot size classes, every one a multiple of 64 bytes (a cache line; object headers and walks rely on it):
// 64 B, then two classes per doubling (128, 192, 256, 384, 512, 768) to 1 KiB, then eight classes per
// doubling up to 256 KiB (each 1/8 of its power of two above the last, so an object over 1 KiB wastes at
// most 1/9 of its slot: a 1,140-byte record takes a 1,152-byte slot, not a 2,048-byte one), then 512 KiB
// and 1 MiB (slabs are at most 1 MiB: larger fine classes would leave most of a slab unused). Below 1 KiB,
// the halves save a third of a slot (a hash bucket of 360 bytes takes 384, not 512); finer still would
// cost more in partly used slabs (one 64 KiB slab per class per allocating thread) than it saves.
#ifndef FATHOM_PLATFORM_MEMORY_SIZE_CLASSES_H_
#define FATHOM_PLATFORM_MEMORY_SIZE_CLASSES_H_

#include <bit>
#include <cstdint>

namespace fathom::memory {

inline constexpr uint32_t kMinSlotBytes = 64;  // one cache line
inline constexpr uint32_t kMaxSlotBytes = 1u << 20;

namespace size_classes_internal {
inline constexpr int kSmall = 8;                // 64, 128, 192, 256, 384, 512, 768, 1024
inline constexpr int kPerDoubling = 8;
inline constexpr int kDoublings = 8;            // (1K, 2K], ..., (128K, 256K]
inline constexpr int kFine = kSmall + kPerDoubling * kDoublings;
}  // namespace size_classes_internal

inline constexpr int kNumSizeClasses = size_classes_internal::kFine + 2;  // + 512 KiB, 1 MiB

inline constexpr uint32_t SlotBytes(int size_class) {
  using namespace size_classes_internal;
  if (size_class == 0) return kMinSlotBytes;
  if (size_class < kSmall) {
    const uint32_t base = (2 * kMinSlotBytes) << ((size_class - 1) / 2);  // 128, 256, 512, 1024
    return (size_class - 1) % 2 == 0 ? base : base + base / 2;
  }
  if (size_class < kFine) {
    const int doubling = (size_class - kSmall) / kPerDoubling;
    const uint32_t base = 1024u << doubling;
    return base + base / kPerDoubling * static_cast<uint32_t>((size_class - kSmall) % kPerDoubling + 1);
  }
  return size_class == kFine ? 512u << 10 : kMaxSlotBytes;
}

// The smallest class holding `bytes`; -1 if bytes is 0 or over kMaxSlotBytes.
inline constexpr int SizeClassFor(uint64_t bytes) {
  using namespace size_classes_internal;
  if (bytes == 0 || bytes > kMaxSlotBytes) return -1;
  if (bytes <= 1024) {
    if (bytes <= kMinSlotBytes) return 0;
    if (bytes <= 2 * kMinSlotBytes) return 1;
    const int doubling = std::bit_width(bytes - 1) - 8;  // bytes in (128 << doubling, 256 << doubling]
    const uint64_t base = uint64_t{128} << doubling;
    return 2 + 2 * doubling + (bytes <= base + base / 2 ? 0 : 1);
  }
  if (bytes <= SlotBytes(kFine - 1)) {
    const int doubling = std::bit_width(bytes - 1) - 11;  // bytes in (1024 << doubling, 2048 << doubling]
    const uint64_t base = uint64_t{1024} << doubling;
    const uint64_t step = base / kPerDoubling;
    return kSmall + doubling * kPerDoubling + static_cast<int>((bytes - base + step - 1) / step) - 1;
  }
  return bytes <= SlotBytes(kFine) ? kFine : kFine + 1;
}

namespace size_classes_internal {
// Every class is a multiple of 64, larger than the one before, and the smallest holding itself and
// everything above the one before.
inline constexpr bool Consistent() {
  for (int c = 0; c < kNumSizeClasses; ++c) {
    const uint32_t bytes = SlotBytes(c);
    if (bytes % kMinSlotBytes != 0 || SizeClassFor(bytes) != c) return false;
    if (c > 0 && (bytes <= SlotBytes(c - 1) || SizeClassFor(SlotBytes(c - 1) + 1) != c)) return false;
  }
  return true;
}
}  // namespace size_classes_internal

static_assert(size_classes_internal::Consistent());
static_assert(SizeClassFor(1) == 0 && SizeClassFor(64) == 0 && SizeClassFor(65) == 1);
static_assert(SlotBytes(SizeClassFor(1100)) == 1152 && SlotBytes(SizeClassFor(360)) == 384);
static_assert(SlotBytes(SizeClassFor(700)) == 768 && SlotBytes(SizeClassFor(1024)) == 1024);
static_assert(SizeClassFor(kMaxSlotBytes) == kNumSizeClasses - 1 && SizeClassFor(kMaxSlotBytes + 1) == -1);
static_assert(SlotBytes(kNumSizeClasses - 1) == kMaxSlotBytes);

}  // namespace fathom::memory

#endif  // FATHOM_PLATFORM_MEMORY_SIZE_CLASSES_H_
