// The asynchronous driver over lanes of plain threads and an in-memory store whose operations complete
// either inside the call (as a local Fathom GET may) or later from the lane's queue: every planned
// operation runs exactly once and is measured, read-modify-writes count their parts, run-phase inserts are
// acknowledged, warm-up is not measured, and what the driver cannot do is refused.
#include "bench/ycsb/async_runner.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "bench/ycsb/memory_backend.h"
#include "gtest/gtest.h"
#include "platform/base/mutex.h"

namespace fathom::ycsb {
namespace {

// Completes every other operation inline and the rest from the lane's queue.
class MemoryAsyncBackend final : public AsyncBackend {
 public:
  MemoryAsyncBackend(MemoryStore* store, std::function<void(std::function<void()>)> later)
      : db_(store), later_(std::move(later)) {}

  void Read(const std::string& table, const std::string& key, const FieldList* fields, ReadDone done) override {
    Record record;
    absl::Status s = db_.Read(table, key, fields, &record);
    Complete([done, s, record] { s.ok() ? done(record) : done(s); });
  }
  void Update(const std::string& table, const std::string& key, const Record& values, Done done) override {
    absl::Status s = db_.Update(table, key, values);
    Complete([done, s] { done(s); });
  }
  void Insert(const std::string& table, const std::string& key, const Record& values, Done done) override {
    absl::Status s = db_.Insert(table, key, values);
    Complete([done, s] { done(s); });
  }
  void Delete(const std::string& table, const std::string& key, Done done) override {
    absl::Status s = db_.Delete(table, key);
    Complete([done, s] { done(s); });
  }

 private:
  void Complete(std::function<void()> done) {
    if (++calls_ % 2 == 0) return done();
    later_(std::move(done));
  }

  MemoryBackend db_;
  std::function<void(std::function<void()>)> later_;
  uint64_t calls_ = 0;
};

// `n` lanes, each a thread running its queue.
class ThreadLanes final : public AsyncLanes {
 public:
  ThreadLanes(int n, MemoryStore* store) : lanes_(static_cast<size_t>(n)) {
    for (int i = 0; i < n; ++i) {
      Lane& lane = lanes_[static_cast<size_t>(i)];
      lane.backend = std::make_unique<MemoryAsyncBackend>(store, [this, i](std::function<void()> task) {
        Post(i, std::move(task)).IgnoreError();
      });
      lane.thread = std::thread([&lane] { lane.Loop(); });
    }
  }
  ~ThreadLanes() override {
    for (Lane& lane : lanes_) {
      {
        std::lock_guard<std::mutex> lock(lane.mu);
        lane.stop = true;
      }
      lane.cv.notify_one();
      lane.thread.join();
    }
  }
  int lanes() const override { return static_cast<int>(lanes_.size()); }
  absl::Status Post(int i, std::function<void()> task) override {
    Lane& lane = lanes_.at(static_cast<size_t>(i));
    {
      std::lock_guard<std::mutex> lock(lane.mu);
      lane.tasks.push_back(std::move(task));
    }
    lane.cv.notify_one();
    return absl::OkStatus();
  }
  AsyncBackend& backend(int i) override { return *lanes_.at(static_cast<size_t>(i)).backend; }
  std::string Describe() const override { return "thread lanes"; }

 private:
  struct Lane {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> tasks;
    bool stop = false;
    std::unique_ptr<AsyncBackend> backend;
    std::thread thread;

    void Loop() {
      std::unique_lock<std::mutex> lock(mu);
      while (true) {
        cv.wait(lock, [&] { return stop || !tasks.empty(); });
        if (tasks.empty()) return;
        std::function<void()> task = std::move(tasks.front());
        tasks.pop_front();
        lock.unlock();
        task();
        lock.lock();
      }
    }
  };
  std::vector<Lane> lanes_;
};

std::unique_ptr<CoreWorkload> Workload(const std::string& mix) {
  Properties props;
  EXPECT_TRUE(props.ParseText("recordcount=500\noperationcount=2000\nrequestdistribution=zipfian\n" + mix).ok());
  auto workload = CoreWorkload::Create(props);
  EXPECT_TRUE(workload.ok()) << workload.status();
  return std::move(workload).value();
}

PhaseResult MustRun(CoreWorkload& workload, AsyncLanes& lanes, RunOptions options) {
  auto result = RunPhaseAsync(workload, lanes, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? std::move(result).value() : PhaseResult{};
}

size_t StoreSize(MemoryStore& store) {
  MutexLock lock(&store.keys_mu);
  return store.keys.size();
}

TEST(AsyncRunnerTest, LoadsAndRunsEveryOperationOnceMeasured) {
  MemoryStore store;
  ThreadLanes lanes(3, &store);
  auto workload = Workload("readproportion=0.5\nupdateproportion=0.5\n");
  const PhaseResult load = MustRun(*workload, lanes, {.phase = Phase::kLoad, .threads = 7});
  EXPECT_EQ(load.operations, 500u);
  EXPECT_EQ(load.measurements.Returns(Operation::kInsert, ReturnCode::kOk), 500u);
  EXPECT_EQ(StoreSize(store), 500u);
  const PhaseResult run = MustRun(*workload, lanes, {.phase = Phase::kRun, .threads = 7, .warmup_ops = 300});
  EXPECT_EQ(run.operations, 2000u);  // the warm-up's 300 are not counted
  const uint64_t reads = run.measurements.Returns(Operation::kRead, ReturnCode::kOk);
  const uint64_t updates = run.measurements.Returns(Operation::kUpdate, ReturnCode::kOk);
  EXPECT_EQ(reads + updates, 2000u);
  EXPECT_GT(reads, 800u);
  EXPECT_GT(updates, 800u);
  EXPECT_EQ(run.measurements.Latencies(Operation::kRead, false).count(), reads);
}

TEST(AsyncRunnerTest, ReadModifyWritesCountTheirReadAndUpdate) {
  MemoryStore store;
  ThreadLanes lanes(2, &store);
  auto workload = Workload("readproportion=0.5\nupdateproportion=0\nreadmodifywriteproportion=0.5\n");
  MustRun(*workload, lanes, {.phase = Phase::kLoad, .threads = 4});
  const PhaseResult run = MustRun(*workload, lanes, {.phase = Phase::kRun, .threads = 4});
  const uint64_t rmw = run.measurements.Returns(Operation::kReadModifyWrite, ReturnCode::kOk);
  EXPECT_NEAR(static_cast<double>(rmw), 1000, 150);
  EXPECT_EQ(run.measurements.Returns(Operation::kUpdate, ReturnCode::kOk), rmw);
  EXPECT_EQ(run.measurements.Returns(Operation::kRead, ReturnCode::kOk), 2000u);
  EXPECT_EQ(run.operations, 2000u);
}

TEST(AsyncRunnerTest, RunPhaseInsertsAreAcknowledgedSoLatestKeepsReadingThem) {
  MemoryStore store;
  ThreadLanes lanes(3, &store);
  auto workload = Workload("readproportion=0.9\nupdateproportion=0\ninsertproportion=0.1\nrequestdistribution=latest\n");
  MustRun(*workload, lanes, {.phase = Phase::kLoad, .threads = 3});
  const PhaseResult run = MustRun(*workload, lanes, {.phase = Phase::kRun, .threads = 9});
  const uint64_t inserts = run.measurements.Returns(Operation::kInsert, ReturnCode::kOk);
  EXPECT_GT(inserts, 100u);
  EXPECT_EQ(StoreSize(store), 500u + inserts);
  // Never a read of a key whose insert was not acknowledged yet.
  EXPECT_EQ(run.measurements.Returns(Operation::kRead, ReturnCode::kNotFound), 0u);
  EXPECT_EQ(run.measurements.Returns(Operation::kInsert, ReturnCode::kError), 0u);
}

TEST(AsyncRunnerTest, RefusesATargetRateAndInsertRetries) {
  MemoryStore store;
  ThreadLanes lanes(1, &store);
  auto workload = Workload("");
  EXPECT_EQ(RunPhaseAsync(*workload, lanes, {.phase = Phase::kRun, .target_ops_per_sec = 100}).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto retrying = Workload("core_workload_insertion_retry_limit=3\n");
  EXPECT_EQ(RunPhaseAsync(*retrying, lanes, {.phase = Phase::kLoad}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fathom::ycsb
