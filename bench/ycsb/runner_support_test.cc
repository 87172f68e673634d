// The progress reporter's timeline: samples of operations done, in time order, until it stops.
#include "bench/ycsb/runner_support.h"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

std::vector<std::pair<long long, long long>> ReadTimeline(const std::string& path) {
  std::vector<std::pair<long long, long long>> samples;
  std::ifstream in(path);
  long long ms = 0, done = 0;
  while (in >> ms >> done) samples.emplace_back(ms, done);
  return samples;
}

TEST(ProgressReporterTest, WritesATimelineOfOperationsDone) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/timeline";
  std::atomic<int64_t> done{0};
  {
    ProgressReporter progress("run", absl::Seconds(100), &done, Timeline{path, absl::Milliseconds(2)});
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    // Operations go on until a few samples are out (a condition, with a generous deadline).
    while (ReadTimeline(path).size() < 5 && absl::Now() < give_up) {
      done.fetch_add(10);
      absl::SleepFor(absl::Milliseconds(1));
    }
  }
  const auto samples = ReadTimeline(path);
  ASSERT_GE(samples.size(), 5u);
  for (size_t i = 1; i < samples.size(); ++i) {
    EXPECT_GE(samples[i].first, samples[i - 1].first);
    EXPECT_GE(samples[i].second, samples[i - 1].second);
  }
  EXPECT_EQ(samples.back().second, done.load()) << "the last sample is taken as the reporter stops";
  EXPECT_GT(samples.front().first, 1'600'000'000'000LL) << "unix milliseconds";
}

}  // namespace
}  // namespace fathom::ycsb
