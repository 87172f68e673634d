#include "tests/history/format.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/base/clock.h"
#include "platform/base/mutex.h"
#include "platform/base/status_test_macros.h"
#include "tests/history/check.h"
#include "tests/history/parse.h"

namespace fathom::history {
namespace {

TEST(FormatEventTest, WritesTheDocumentedForm) {
  const Event e{2, EventType::kOk, {MicroOp::Append(1, 5), MicroOp::Read(1, std::vector<int64_t>{3, 5}), MicroOp::Read(4, std::vector<int64_t>{})}, 77};
  EXPECT_EQ(FormatEvent(e),
            R"({"process":2,"type":"ok","f":"txn","value":[[":append",1,5],[":r",1,[3,5]],[":r",4,[]]],"time":77})");
  const Event invoke{2, EventType::kInvoke, {MicroOp::Read(1)}, 70};
  EXPECT_EQ(FormatEvent(invoke), R"({"process":2,"type":"invoke","f":"txn","value":[[":r",1,null]],"time":70})");
}

TEST(HistoryRecorderTest, TimesNeverDecreaseEvenIfTheClockDoes) {
  SimulatedClock clock(absl::FromUnixNanos(1000));
  HistoryRecorder recorder(&clock);
  recorder.Invoke(0, {MicroOp::Append(1, 1)});
  clock.Advance(absl::Nanoseconds(5));
  recorder.Complete(0, EventType::kOk, {MicroOp::Append(1, 1)});
  ASSERT_OK_AND_ASSIGN(History h, ParseHistory(recorder.Text()));
  ASSERT_EQ(h.txns.size(), 1u);
  EXPECT_EQ(h.txns[0].invoke_time, 1000);
  EXPECT_EQ(h.txns[0].complete_time, 1005);

  clock.Advance(absl::Nanoseconds(-3));  // the clock steps back: the previous time is reused
  recorder.Invoke(0, {});
  recorder.Complete(0, EventType::kOk, {});
  ASSERT_OK_AND_ASSIGN(h, ParseHistory(recorder.Text()));
  ASSERT_EQ(h.txns.size(), 2u);
  EXPECT_EQ(h.txns[1].invoke_time, 1005);
}

TEST(HistoryRecorderTest, WritesAFile) {
  HistoryRecorder recorder;
  recorder.Invoke(0, {MicroOp::Read(1)});
  recorder.Complete(0, EventType::kOk, {MicroOp::Read(1, std::vector<int64_t>{})});
  const std::string path = ::testing::TempDir() + "/recorded.jsonl";
  ASSERT_OK(recorder.WriteFile(path));
  ASSERT_OK_AND_ASSIGN(History h, ReadHistoryFile(path));
  EXPECT_EQ(h.txns.size(), 1u);
  EXPECT_FALSE(recorder.WriteFile("/nonexistent-dir/x.jsonl").ok());
}

// Client threads record a real (if trivial) workload: each thread appends to its own key under a lock
// that makes the store linearizable, so the history must check clean. Run under TSan, this also checks
// the recorder's locking.
TEST(HistoryRecorderTest, ConcurrentClientsRecordACheckableHistory) {
  HistoryRecorder recorder;
  absl::Mutex store_mu;
  std::vector<std::vector<int64_t>> store(4);
  std::vector<std::thread> threads;
  for (int p = 0; p < 4; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < 200; ++i) {
        const int64_t key = (p + i) % 4;
        const int64_t value = p * 1000 + i;
        recorder.Invoke(p, {MicroOp::Append(key, value), MicroOp::Read(key)});
        std::vector<int64_t> read;
        {
          MutexLock lock(&store_mu);
          store[key].push_back(value);
          read = store[key];
        }
        recorder.Complete(p, EventType::kOk, {MicroOp::Append(key, value), MicroOp::Read(key, read)});
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_OK_AND_ASSIGN(History h, ParseHistory(recorder.Text()));
  EXPECT_EQ(h.txns.size(), 800u);
  const CheckResult result = CheckHistory(h);
  EXPECT_TRUE(result.valid()) << result.ToString();
}

}  // namespace
}  // namespace fathom::history
