#include "bench/ycsb/cpu_usage.h"

#include <unistd.h>

#include <vector>

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

TEST(CpuUsageTest, ProcessesSumAndNameTheMissingOne) {
  const pid_t self = getpid();
  absl::StatusOr<double> one = ProcessCpuSeconds(self);
  absl::StatusOr<double> two = ProcessesCpuSeconds({self, getppid()});
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_GE(*two, *one);
  EXPECT_EQ(*ProcessesCpuSeconds({}), 0);
  absl::Status gone = ProcessesCpuSeconds({self, 999999999}).status();
  EXPECT_EQ(gone.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(gone.message().find("999999999"), absl::string_view::npos) << gone;
}

TEST(CpuUsageTest, PidListParsesOrSaysWhichEntryIsWrong) {
  EXPECT_EQ(*ParsePidList("12,34,5"), (std::vector<pid_t>{12, 34, 5}));
  EXPECT_TRUE(ParsePidList("")->empty());
  for (const char* bad : {"12,", ",12", "12,,3", "0", "-4", "x", "1 2", "99999999999", "7,7"}) {
    absl::StatusOr<std::vector<pid_t>> pids = ParsePidList(bad);
    EXPECT_EQ(pids.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace fathom::ycsb
