// Seeds for simulation tests: random on every run, so runs explore, and printed, so a failure replays.
//
//   TEST(MyProtocolTest, SurvivesDrops) {
//     const uint64_t seed = TestSeed();
//     SCOPED_TRACE(SeedTrace(seed));    // every failure below shows "seed=N (replay: ...)"
//     SimOptions options;
//     options.seed = seed;
//     ...
//   }
//
// Replay: bazel test //some:test --test_env=FATHOM_SEED=N
#ifndef FATHOM_PLATFORM_FABRIC_SIM_TEST_SEED_H_
#define FATHOM_PLATFORM_FABRIC_SIM_TEST_SEED_H_

#include <cstdint>
#include <string>

namespace fathom::fabric::sim {

// FATHOM_SEED from the environment if set (replay), otherwise a fresh random seed. Prints the seed to stderr
// and records it as the test's "seed" property (in the XML report).
uint64_t TestSeed();

// "seed=N (replay: --test_env=FATHOM_SEED=N)", for SCOPED_TRACE.
std::string SeedTrace(uint64_t seed);

}  // namespace fathom::fabric::sim

#endif  // FATHOM_PLATFORM_FABRIC_SIM_TEST_SEED_H_
