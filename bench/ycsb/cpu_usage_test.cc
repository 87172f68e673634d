#include "bench/ycsb/cpu_usage.h"

#include <unistd.h>

#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

TEST(CpuUsageTest, ProcFileAgreesWithGetrusageForThisProcess) {
  // Burn 0.2 s of CPU (not of wall time: the machine may be busy) so both sources see many clock ticks.
  const double start = SelfCpuSeconds();
  volatile uint64_t x = 0;
  while (SelfCpuSeconds() < start + 0.2) x = x + 1;
  const double self = SelfCpuSeconds();
  absl::StatusOr<double> proc = ProcessCpuSeconds(getpid());
  ASSERT_TRUE(proc.ok()) << proc.status();
  EXPECT_GT(*proc, 0.1);
  EXPECT_NEAR(*proc, self, 0.05);  // a few clock ticks
}

TEST(CpuUsageTest, NoSuchProcessIsNotFound) {
  EXPECT_EQ(ProcessCpuSeconds(0).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ProcessCpuSeconds(999999999).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fathom::ycsb
