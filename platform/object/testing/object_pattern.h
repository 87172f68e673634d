// Self-describing payloads for object stress tests: a payload names its object and write generation and
// every other byte follows from those two, so a reader can prove that what it accepted is one write.
#ifndef FATHOM_PLATFORM_OBJECT_TESTING_OBJECT_PATTERN_H_
#define FATHOM_PLATFORM_OBJECT_TESTING_OBJECT_PATTERN_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace fathom::object::testing {

// The payload length of write `generation` to an object with `room` payload bytes (>= 16): the whole room
// at first (so benchmarks hash full objects), then varying, so length fields are exercised too.
inline size_t PatternLength(uint64_t generation, size_t room) {
  if (generation == 0) return room;
  return 16 + (generation * 7919) % (room - 15);
}

inline uint8_t PatternByte(uint64_t object, uint64_t generation, size_t i) {
  return static_cast<uint8_t>(object * 31 + generation * 17 + i * 13 + (i >> 8));
}

inline void FillPattern(uint64_t object, uint64_t generation, size_t room, std::vector<std::byte>& out) {
  out.resize(PatternLength(generation, room));
  std::memcpy(out.data(), &object, 8);
  std::memcpy(out.data() + 8, &generation, 8);
  for (size_t i = 16; i < out.size(); ++i) out[i] = static_cast<std::byte>(PatternByte(object, generation, i));
}

// True if `payload` is exactly what FillPattern wrote for `object` (any generation).
inline bool MatchesPattern(uint64_t object, size_t room, std::span<const std::byte> payload) {
  if (payload.size() < 16) return false;
  uint64_t id, generation;
  std::memcpy(&id, payload.data(), 8);
  std::memcpy(&generation, payload.data() + 8, 8);
  if (id != object || payload.size() != PatternLength(generation, room)) return false;
  for (size_t i = 16; i < payload.size(); ++i) {
    if (payload[i] != static_cast<std::byte>(PatternByte(object, generation, i))) return false;
  }
  return true;
}

}  // namespace fathom::object::testing

#endif  // FATHOM_PLATFORM_OBJECT_TESTING_OBJECT_PATTERN_H_
