#include "platform/fabric/sim/test_seed.h"

#include <cstdlib>
#include <iostream>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace fathom::fabric::sim {

uint64_t TestSeed() {
  uint64_t seed = 0;
  const char* from_env = std::getenv("FATHOM_SEED");
  if (from_env != nullptr && absl::SimpleAtoi(from_env, &seed)) {
    std::cerr << "[ seed     ] " << SeedTrace(seed) << " from FATHOM_SEED" << std::endl;
  } else {
    if (from_env != nullptr) std::cerr << "[ seed     ] ignoring unparsable FATHOM_SEED=" << from_env << std::endl;
    std::random_device entropy;
    seed = (uint64_t{entropy()} << 32) | entropy();
    std::cerr << "[ seed     ] " << SeedTrace(seed) << std::endl;
  }
  if (::testing::UnitTest::GetInstance()->current_test_info() != nullptr) {
    ::testing::Test::RecordProperty("seed", absl::StrCat(seed));
  }
  return seed;
}

std::string SeedTrace(uint64_t seed) {
  return absl::StrCat("seed=", seed, " (replay: --test_env=FATHOM_SEED=", seed, ")");
}

}  // namespace fathom::fabric::sim
