// The progress reporter's timeline: samples of operations done, in time order, until it stops.
#include "bench/ycsb/runner_support.h"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
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

TEST(BudgetTest, TakesUpToWhatIsLeft) {
  Budget budget(10);
  EXPECT_EQ(budget.TakeUpTo(4), 4);
  EXPECT_EQ(budget.TakeUpTo(4), 4);
  EXPECT_EQ(budget.TakeUpTo(4), 2);
  EXPECT_EQ(budget.TakeUpTo(4), 0);
  EXPECT_FALSE(budget.Take());
  EXPECT_EQ(budget.TakeUpTo(0), 0);
}

TEST(BudgetTest, NothingAfterTheDeadline) {
  Budget budget(10, absl::Now() - absl::Seconds(1));
  EXPECT_TRUE(budget.Expired());
  EXPECT_EQ(budget.TakeUpTo(4), 0);
  std::atomic<int64_t> done{0};
  ThreadShare share(budget, done, 4);
  EXPECT_FALSE(share.Take());
}

TEST(ThreadShareTest, SharesRunTheWholeBudgetExactlyOnce) {
  constexpr int64_t kTotal = 100'003;  // not a multiple of the chunk
  Budget budget(kTotal);
  std::atomic<int64_t> done{0};
  std::atomic<int64_t> taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      ThreadShare share(budget, done, 32);
      int64_t mine = 0;
      while (share.Take()) {
        ++mine;
        share.CountDone();
      }
      taken.fetch_add(mine);
    });  // the share's destructor adds what it had not counted yet
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(taken.load(), kTotal);
  EXPECT_EQ(done.load(), kTotal);
}

TEST(ThreadShareTest, CountsInChunksAndOnFlush) {
  Budget budget(100);
  std::atomic<int64_t> done{0};
  ThreadShare share(budget, done, 8);
  for (int i = 0; i < 7; ++i) share.CountDone();
  EXPECT_EQ(done.load(), 0) << "counted once a chunk is full";
  share.CountDone();
  EXPECT_EQ(done.load(), 8);
  share.CountDone();
  share.Flush();
  EXPECT_EQ(done.load(), 9);
}

}  // namespace
}  // namespace fathom::ycsb
