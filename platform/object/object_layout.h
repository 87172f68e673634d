// The byte layout of a versioned, self-verifying object (docs/formats/object.md).
//
// Every object occupies one slot (platform/memory) and starts with a 32-byte header. The checksum covers
// the rest of the header and the payload, so a reader that copies the object in one one-sided read, with
// bytes arriving in any order and pieces from two different writes, can tell a consistent copy from a torn
// one without any help from the owner. FaRM relies on the NIC reading cache lines atomically; shared
// memory and tcp give no such guarantee, so Fathom checks every byte, as Pilaf does.
#ifndef FATHOM_PLATFORM_OBJECT_OBJECT_LAYOUT_H_
#define FATHOM_PLATFORM_OBJECT_OBJECT_LAYOUT_H_

#include <cstddef>
#include <cstdint>

#include "platform/memory/global_address.h"

namespace fathom::object {

//  offset  size  field
//   0      8     checksum        XXH3-64 of bytes [8, 32 + payload_length), as stored unlocked
//   8      8     version_word    bit 63: lock; bits 0..62: version, +1 per write
//  16      4     incarnation     +1 each time the slot is freed: a stale reference no longer matches
//  20      4     payload_length  bytes of payload in use
//  24      4     capacity        slot bytes (header + payload room)
//  28      4     flags           bit 0: live (allocated); other bits zero
//  32      ...   payload
inline constexpr size_t kChecksumOffset = 0;
inline constexpr size_t kVersionOffset = 8;
inline constexpr size_t kIncarnationOffset = 16;
inline constexpr size_t kLengthOffset = 20;
inline constexpr size_t kCapacityOffset = 24;
inline constexpr size_t kFlagsOffset = 28;
inline constexpr size_t kHeaderBytes = 32;

inline constexpr uint64_t kLockBit = uint64_t{1} << 63;
inline constexpr uint64_t kVersionMask = kLockBit - 1;
inline constexpr uint32_t kLiveFlag = 1;

// What a pointer to an object holds: where it is, which incarnation of the slot it means, and how many
// bytes to read. 16 bytes; stored inside other objects (docs/formats/object.md).
struct ObjectRef {
  memory::GlobalAddress address;
  uint32_t incarnation = 0;
  uint32_t capacity = 0;  // slot bytes, header included

  uint32_t payload_capacity() const { return capacity - kHeaderBytes; }
  friend bool operator==(const ObjectRef& a, const ObjectRef& b) {
    return a.address == b.address && a.incarnation == b.incarnation && a.capacity == b.capacity;
  }
};

// A decoded header, from a validated copy.
struct ObjectHeader {
  uint64_t checksum = 0;
  uint64_t version_word = 0;
  uint32_t incarnation = 0;
  uint32_t payload_length = 0;
  uint32_t capacity = 0;
  uint32_t flags = 0;

  bool locked() const { return (version_word & kLockBit) != 0; }
  uint64_t version() const { return version_word & kVersionMask; }
  bool live() const { return (flags & kLiveFlag) != 0; }
};

}  // namespace fathom::object

#endif  // FATHOM_PLATFORM_OBJECT_OBJECT_LAYOUT_H_
