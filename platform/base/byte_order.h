// Little-endian integers in byte strings and buffers. Every wire and log format of Fathom is little-endian
// (docs/formats/), and so is every host it builds for (checked below), so each of these is one copy; the
// one module all encoders share, so no format grows a byte order of its own.
//
//   std::string out;
//   AppendU64(out, version);                    // 8 bytes, least significant first
//   uint64_t v = LoadU64(out.data());
//   StoreLe<uint16_t>(header + 28, type);       // any unsigned width, into a buffer
#ifndef FATHOM_PLATFORM_BASE_BYTE_ORDER_H_
#define FATHOM_PLATFORM_BASE_BYTE_ORDER_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace fathom {

static_assert(std::endian::native == std::endian::little, "Fathom's formats are little-endian, and so must the host be");

// REQUIRES: sizeof(T) readable bytes at `p`.
template <typename T>
  requires std::is_integral_v<T>
inline T LoadLe(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// REQUIRES: sizeof(T) writable bytes at `p`.
template <typename T>
  requires std::is_integral_v<T>
inline void StoreLe(void* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

template <typename T>
  requires std::is_integral_v<T>
inline void AppendLe(std::string& out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof v);
  out.append(bytes, sizeof v);
}

inline void AppendU16(std::string& out, uint16_t v) { AppendLe(out, v); }
inline void AppendU32(std::string& out, uint32_t v) { AppendLe(out, v); }
inline void AppendU64(std::string& out, uint64_t v) { AppendLe(out, v); }
inline uint16_t LoadU16(const char* p) { return LoadLe<uint16_t>(p); }
inline uint32_t LoadU32(const char* p) { return LoadLe<uint32_t>(p); }
inline uint64_t LoadU64(const char* p) { return LoadLe<uint64_t>(p); }

}  // namespace fathom

#endif  // FATHOM_PLATFORM_BASE_BYTE_ORDER_H_
