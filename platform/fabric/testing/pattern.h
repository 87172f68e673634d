// The byte pattern a conformance peer fills its region with, so readers can verify any range.
#ifndef FATHOM_PLATFORM_FABRIC_TESTING_PATTERN_H_
#define FATHOM_PLATFORM_FABRIC_TESTING_PATTERN_H_

#include <cstddef>
#include <cstdint>

namespace fathom::fabric::testing {

inline uint8_t PatternByte(uint64_t offset) {
  return static_cast<uint8_t>((offset * 131) ^ (offset >> 8) ^ (offset >> 16) * 7);
}

inline void FillPattern(std::byte* data, size_t size) {
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<std::byte>(PatternByte(i));
}

// Region size every conformance peer offers: room for a 16 MiB transfer at a non-zero offset.
inline constexpr size_t kPeerRegionBytes = 32u << 20;

}  // namespace fathom::fabric::testing

#endif  // FATHOM_PLATFORM_FABRIC_TESTING_PATTERN_H_
