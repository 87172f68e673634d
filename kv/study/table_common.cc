#include "kv/study/table_common.h"

#include <xxhash.h>

namespace fathom::kv::study {

uint64_t SeededHash(uint64_t key, uint64_t seed) { return XXH3_64bits_withSeed(&key, sizeof key, seed); }

uint64_t DeriveSeed(uint64_t base_seed, uint64_t index) {
  const uint64_t words[2] = {base_seed, index};
  return XXH3_64bits(words, sizeof words);
}

}  // namespace fathom::kv::study
