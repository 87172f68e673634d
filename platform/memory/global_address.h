// GlobalAddress: one 64-bit address space over every node's regions (region id 32 bits, offset 32 bits).
// Region 0 is never allocated, so the zero address is null.
//
//   GlobalAddress a{/*region=*/7, /*offset=*/4096};
//   uint64_t wire = a.raw();                    // what gets stored in objects and messages
//   GlobalAddress b = GlobalAddress::FromRaw(wire);
#ifndef FATHOM_PLATFORM_MEMORY_GLOBAL_ADDRESS_H_
#define FATHOM_PLATFORM_MEMORY_GLOBAL_ADDRESS_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"

namespace fathom::memory {

inline constexpr uint32_t kNullRegion = 0;

// A node's own regions: ids node << 16 | index (index 0: its ring region; data regions from 1). The one
// place this formula lives; the node that allocated a region owns it and serves it as primary.
inline constexpr uint32_t NodeRegionId(uint32_t node, uint32_t index) { return node << 16 | index; }
inline constexpr uint32_t OwnerOfRegion(uint32_t region) { return region >> 16; }
// Offsets are 32 bits: a region holds at most 4 GiB.
inline constexpr uint64_t kMaxRegionBytes = uint64_t{1} << 32;

struct GlobalAddress {
  uint32_t region = kNullRegion;
  uint32_t offset = 0;

  constexpr uint64_t raw() const { return uint64_t{region} << 32 | offset; }
  static constexpr GlobalAddress FromRaw(uint64_t raw) {
    return GlobalAddress{static_cast<uint32_t>(raw >> 32), static_cast<uint32_t>(raw)};
  }
  constexpr bool is_null() const { return region == kNullRegion; }
  std::string ToString() const { return absl::StrFormat("r%u+0x%x", region, offset); }

  friend constexpr bool operator==(GlobalAddress a, GlobalAddress b) { return a.raw() == b.raw(); }
  friend constexpr bool operator!=(GlobalAddress a, GlobalAddress b) { return a.raw() != b.raw(); }
  friend constexpr bool operator<(GlobalAddress a, GlobalAddress b) { return a.raw() < b.raw(); }
  template <typename H>
  friend H AbslHashValue(H h, GlobalAddress a) {
    return H::combine(std::move(h), a.raw());
  }
};

}  // namespace fathom::memory

#endif  // FATHOM_PLATFORM_MEMORY_GLOBAL_ADDRESS_H_
