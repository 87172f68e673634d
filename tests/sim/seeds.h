// The seeds a simulation test runs: FATHOM_SEED=N that seed only; FATHOM_SEEDS=K seeds 1..K (default 4).
// Pass them with --test_env; a failing test names its seed with Replay(seed).
#ifndef FATHOM_TESTS_SIM_SEEDS_H_
#define FATHOM_TESTS_SIM_SEEDS_H_

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fathom::sim {

inline std::vector<uint64_t> Seeds() {
  uint64_t value = 0;
  if (const char* one = std::getenv("FATHOM_SEED"); one != nullptr && absl::SimpleAtoi(one, &value)) return {value};
  uint64_t count = 4;
  if (const char* many = std::getenv("FATHOM_SEEDS"); many != nullptr) (void)absl::SimpleAtoi(many, &count);
  std::vector<uint64_t> seeds;
  for (uint64_t s = 1; s <= count; ++s) seeds.push_back(s);
  return seeds;
}

// Every `stride`th of Seeds() (1, 1 + stride, ...), for a scenario that costs several times the others;
// FATHOM_SEED=N still runs N.
inline std::vector<uint64_t> SeedsEvery(uint64_t stride) {
  std::vector<uint64_t> seeds = Seeds();
  if (std::getenv("FATHOM_SEED") != nullptr || stride <= 1) return seeds;
  std::vector<uint64_t> some;
  for (uint64_t seed : seeds) {
    if ((seed - 1) % stride == 0) some.push_back(seed);
  }
  return some;
}

inline std::string Replay(uint64_t seed) {
  return absl::StrCat("seed ", seed, " (replay: --test_env=FATHOM_SEED=", seed, ")");
}

}  // namespace fathom::sim

#endif  // FATHOM_TESTS_SIM_SEEDS_H_
