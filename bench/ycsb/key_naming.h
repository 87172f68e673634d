// YCSB's key names and hash: "user" + FNV-1a-64(keynum), exactly as CoreWorkload.buildKeyName and
// Utils.fnvhash64 produce them, so a key set loaded by this driver matches one loaded by Java YCSB.
//
//   BuildKeyName(0, /*ordered=*/false, /*zero_padding=*/1) == "user6284781860667377211"  (YCSB's first key)
//   BuildKeyName(7, /*ordered=*/true, /*zero_padding=*/4)  == "user0007"
#ifndef FATHOM_BENCH_YCSB_KEY_NAMING_H_
#define FATHOM_BENCH_YCSB_KEY_NAMING_H_

#include <cstdint>
#include <limits>
#include <string>

namespace fathom::ycsb {

// Utils.fnvhash64(long): FNV-1a over the 8 bytes of `value`, least significant byte first, with offset
// basis 0xCBF29CE484222325 and prime 1099511628211, computed in wrapping 64-bit arithmetic, then
// Math.abs of the result read as a signed long. Math.abs(Long.MIN_VALUE) is Long.MIN_VALUE in Java, so
// that one input stays negative; we keep that quirk (std::abs would be undefined behaviour there).
inline int64_t YcsbFnvHash64(int64_t value) {
  constexpr uint64_t kOffsetBasis = 0xCBF29CE484222325ULL;
  constexpr uint64_t kPrime = 1099511628211ULL;
  uint64_t bits = static_cast<uint64_t>(value);
  uint64_t hash = kOffsetBasis;
  for (int i = 0; i < 8; ++i) {
    hash ^= bits & 0xff;  // Java shifts arithmetically, but only the low 8 bytes are ever read: same bytes
    bits >>= 8;
    hash *= kPrime;
  }
  const int64_t signed_hash = static_cast<int64_t>(hash);
  if (signed_hash == std::numeric_limits<int64_t>::min()) return signed_hash;
  return signed_hash < 0 ? -signed_hash : signed_hash;
}

// CoreWorkload.buildKeyName: with insertorder=hashed (ordered=false) the key number is hashed first;
// the decimal number is left-padded with '0' to `zero_padding` digits (YCSB's default padding is 1,
// i.e. none) and prefixed with "user".
inline std::string BuildKeyName(int64_t keynum, bool ordered, int zero_padding) {
  if (!ordered) keynum = YcsbFnvHash64(keynum);
  const std::string digits = std::to_string(keynum);
  std::string key = "user";
  for (int fill = zero_padding - static_cast<int>(digits.size()); fill > 0; --fill) key.push_back('0');
  key += digits;
  return key;
}

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_KEY_NAMING_H_
