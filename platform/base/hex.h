// Hex decoding that rejects bad input (Debian's Abseil 20220623 has only an unchecked HexStringToBytes).
#ifndef FATHOM_PLATFORM_BASE_HEX_H_
#define FATHOM_PLATFORM_BASE_HEX_H_

#include <string>
#include <string_view>

namespace fathom {

// Decodes `hex` (even length, [0-9a-fA-F]) into `out`; false on any bad character or odd length.
inline bool HexToBytes(std::string_view hex, std::string* out) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return false;
  std::string bytes;
  bytes.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    bytes.push_back(static_cast<char>(hi << 4 | lo));
  }
  *out = std::move(bytes);
  return true;
}

}  // namespace fathom

#endif  // FATHOM_PLATFORM_BASE_HEX_H_
