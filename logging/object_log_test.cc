#include "logging/object_log.h"

#include <cstdlib>
#include <filesystem>

#include "gtest/gtest.h"
#include "logging/log_reader.h"
#include "logging/testing/failing_env.h"
#include "platform/base/status_test_macros.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "tests/util/fresh_dir.h"

namespace fathom::logging {
namespace {

std::string FreshDir(const std::string& name) {
  return fathom::testing::FreshTestDir("object_log_test", name);
}

ObjectState State(uint32_t offset, uint64_t version, std::string payload, bool live = true) {
  ObjectState s;
  s.address = memory::GlobalAddress{1 << 16, offset};
  s.capacity = 64;
  s.incarnation = live ? 0 : 1;
  s.flags = live ? 1 : 0;
  s.version = version;
  s.payload = std::move(payload);
  s.txn_epoch = 1;
  s.txn_node = 1;
  s.txn_counter = version;
  return s;
}

// Waits (really) until `done` holds, up to 10 s.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 2000; ++i) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return done();
}

TEST(ObjectLogTest, KeepsTheLatestStatePerObjectAndItsPosition) {
  const std::string dir = FreshDir("latest");
  {
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir, .node_id = 1}));
    log->Append(State(0, 1, "a1"));
    log->Append(State(64, 1, "b1"));
    log->Append(State(0, 2, "a2"));
    log->Append(State(128, 1, "c1"));
    log->Append(State(128, 2, "", /*live=*/false));  // c freed
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
    ObjectLogStats stats = log->Stats();
    EXPECT_EQ(stats.enqueued, 5u);
    EXPECT_EQ(stats.persisted, 5u);
    EXPECT_EQ(stats.persisted_position, 5u);
    EXPECT_EQ(stats.lag_records, 0u);
    EXPECT_EQ(stats.lag_micros, 0u);
    EXPECT_GE(stats.batches, 1u);
    EXPECT_OK(stats.last_error);
    std::map<std::string, uint64_t> counters;
    log->CounterSource()(counters);
    EXPECT_EQ(counters["log.persisted_position"], 5u);
    EXPECT_EQ(counters["log.error"], 0u);
  }
  ASSERT_OK_AND_ASSIGN(LogContents contents, ReadLog(dir, 1));
  EXPECT_EQ(contents.node_id, 1u);
  EXPECT_EQ(contents.position, 5u);
  ASSERT_EQ(contents.states.size(), 3u);
  EXPECT_EQ(contents.states[0].payload, "a2");
  EXPECT_EQ(contents.states[0].version, 2u);
  EXPECT_EQ(contents.states[0].position, 3u);
  EXPECT_EQ(contents.states[1].payload, "b1");
  EXPECT_FALSE(contents.states[2].live());  // the free is kept, with its incarnation
  EXPECT_EQ(contents.states[2].incarnation, 1u);
}

// The keys of the database in `dir` that start with `prefix` (read directly, bypassing the log).
int KeysStartingWith(const std::string& dir, char prefix) {
  rocksdb::DB* db = nullptr;
  EXPECT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), dir, &db).ok());
  std::unique_ptr<rocksdb::DB> owned(db);
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  int n = 0;
  for (it->Seek(std::string(1, prefix)); it->Valid() && it->key()[0] == prefix; it->Next()) ++n;
  return n;
}

TEST(ObjectLogTest, SegmentsAreFoldedEveryFoldBytesAndAtACleanStop) {
  const std::string dir = FreshDir("fold");
  {
    // A state here is 64 + 2 bytes in a segment: a fold about every 4 batches of one state.
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir, .node_id = 1, .fold_bytes = 250}));
    for (uint64_t v = 1; v <= 5; ++v) {
      for (uint32_t i = 0; i < 4; ++i) {
        log->Append(State(64 * i, v, "v" + std::to_string(v)));
        ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
      }
    }
    const ObjectLogStats stats = log->Stats();
    EXPECT_EQ(stats.folds, 5u);
    EXPECT_EQ(stats.batches, 20u);
    EXPECT_EQ(stats.persisted_position, 20u);
    // Between folds, the latest states are split between object keys and segments; read together.
    log->Append(State(0, 6, "v6"));
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
  }
  EXPECT_EQ(KeysStartingWith(dir, 's'), 0) << "a clean stop folds everything";
  EXPECT_EQ(KeysStartingWith(dir, 'o'), 4);
  ASSERT_OK_AND_ASSIGN(LogContents contents, ReadLog(dir, 1));
  EXPECT_EQ(contents.position, 21u);
  ASSERT_EQ(contents.states.size(), 4u);
  EXPECT_EQ(contents.states[0].payload, "v6");
  EXPECT_EQ(contents.states[0].position, 21u);
  for (int i = 1; i < 4; ++i) EXPECT_EQ(contents.states[i].payload, "v5");
}

ObjectState InEpoch(ObjectState state, uint64_t epoch) {
  state.log_epoch = epoch;
  return state;
}

// Log epochs (docs/formats/log-epochs.md): markers reach the disk after their states, only segments of
// durable epochs are folded, and opening with a cut drops the later epochs for good.
TEST(ObjectLogTest, EpochsCloseOnDiskOnlyDurableOnesFoldAndACutDropsTheRest) {
  const std::string dir = FreshDir("epochs");
  {
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir, .node_id = 1, .fold_bytes = 250}));
    auto append = [&](ObjectState state) {
      log->Append(std::move(state));
      ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));  // one segment each
    };
    append(InEpoch(State(0, 1, "a1"), 1));
    append(InEpoch(State(64, 1, "b1"), 1));
    log->CloseEpoch(1);
    append(InEpoch(State(0, 2, "a2"), 2));
    log->CloseEpoch(2);
    append(InEpoch(State(64, 2, "b2"), 3));
    ASSERT_TRUE(Eventually([&] { return log->PersistedEpoch().value_or(0) == 2; }));
    append(InEpoch(State(128, 1, "c1"), 3));
    EXPECT_EQ(log->Stats().folds, 0u) << "past fold_bytes, but no epoch is durable";
    log->SetDurableEpoch(1);
    append(InEpoch(State(128, 2, "c2"), 3));
    EXPECT_EQ(log->Stats().folds, 1u) << "the segments of epoch 1";
    EXPECT_EQ(log->Stats().closed_epoch, 2u);
  }  // a clean stop folds nothing more: epochs 2 and 3 are not durable
  EXPECT_EQ(KeysStartingWith(dir, 'o'), 2);
  ASSERT_OK_AND_ASSIGN(LogContents contents, ReadLog(dir, 1));
  EXPECT_EQ(contents.closed_epoch, 2u);
  auto payloads = [](const std::vector<ObjectState>& states) {
    std::vector<std::string> out;
    for (const ObjectState& s : states) out.push_back(s.payload);
    return out;
  };
  EXPECT_EQ(payloads(NewestStates(contents, 1)), (std::vector<std::string>{"a1", "b1"}));
  EXPECT_EQ(payloads(NewestStates(contents, 2)), (std::vector<std::string>{"a2", "b1"}));
  EXPECT_EQ(payloads(NewestStates(contents)), (std::vector<std::string>{"a2", "b2", "c2"}));
  {
    // A restart restored epochs up to 1: the rest is gone, and the log says it closed 1.
    ObjectLogOptions options{.dir = dir, .node_id = 1};
    options.cut = 1;
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open(options));
    ASSERT_OK_AND_ASSIGN(uint64_t closed, log->PersistedEpoch());
    EXPECT_EQ(closed, 1u);
  }
  EXPECT_EQ(KeysStartingWith(dir, 's'), 0);
  ASSERT_OK_AND_ASSIGN(contents, ReadLog(dir, 1));
  EXPECT_EQ(contents.closed_epoch, 1u);
  EXPECT_EQ(payloads(contents.states), (std::vector<std::string>{"a1", "b1"}));
}

// The data members a restart with ZooKeeper membership waits for: the newest recorded list is on disk
// with the next write, and read back.
TEST(ObjectLogTest, RecordsTheNewestMemberList) {
  const std::string dir = FreshDir("members");
  {
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir, .node_id = 2}));
    log->RecordMembers({.configuration_epoch = 3, .ids = {1, 2}});
    log->Append(State(0, 1, "a1"));
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
    log->RecordMembers({.configuration_epoch = 5, .ids = {1, 2, 3}});
  }
  ASSERT_OK_AND_ASSIGN(LogContents contents, ReadLog(dir, 2));
  ASSERT_TRUE(contents.members.has_value());
  EXPECT_EQ(contents.members->configuration_epoch, 5u);
  EXPECT_EQ(contents.members->ids, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(contents.states.size(), 1u);
}

TEST(ObjectLogTest, OpenFoldsTheSegmentsACrashLeft) {
  const std::string dir = FreshDir("fold_at_open");
  {
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir, .node_id = 1}));
    log->Append(State(0, 1, "a1"));
    log->Append(State(64, 1, "b1"));
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
    log->Append(State(0, 2, "a2"));
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
    log->Abandon();
  }
  EXPECT_GE(KeysStartingWith(dir, 's'), 1);
  EXPECT_EQ(KeysStartingWith(dir, 'o'), 0);
  {
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir, .node_id = 1}));
    EXPECT_EQ(log->Stats().persisted_position, 3u);
    log->Append(State(64, 2, "b2"));
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
    log->Abandon();  // b2 stays in a segment after the folded a2 and b1
  }
  ASSERT_OK_AND_ASSIGN(LogContents contents, ReadLog(dir, 1));
  EXPECT_EQ(contents.position, 4u);
  ASSERT_EQ(contents.states.size(), 2u);
  EXPECT_EQ(contents.states[0].payload, "a2");
  EXPECT_EQ(contents.states[1].payload, "b2");
  EXPECT_EQ(KeysStartingWith(dir, 'o'), 2);
  EXPECT_EQ(KeysStartingWith(dir, 's'), 1);
}

TEST(ObjectLogTest, AStaleStateReportedLateNeverReplacesANewerOne) {
  const std::string dir = FreshDir("stale");
  {
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir, .node_id = 1}));
    log->Append(State(0, 5, "v5"));
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
    log->Append(State(0, 4, "v4"));  // two backup appliers raced: v4 is told after v5
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
    EXPECT_EQ(log->Stats().superseded, 1u);
  }
  ASSERT_OK_AND_ASSIGN(LogContents contents, ReadLog(dir));
  ASSERT_EQ(contents.states.size(), 1u);
  EXPECT_EQ(contents.states[0].payload, "v5");
  EXPECT_EQ(contents.position, 2u);
}

TEST(ObjectLogTest, ReopeningContinuesThePositionsAndChecksTheNode) {
  const std::string dir = FreshDir("reopen");
  {
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir, .node_id = 2, .sync = true}));
    log->Append(State(0, 1, "x"));
    log->Append(State(64, 1, "y"));
  }  // the destructor drains
  {
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir, .node_id = 2}));
    EXPECT_EQ(log->Stats().persisted_position, 2u);
    log->Append(State(0, 2, "x2"));
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
    EXPECT_EQ(log->Stats().persisted_position, 3u);
  }
  auto other = ObjectLog::Open({.dir = dir, .node_id = 3});
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition) << other.status();
  EXPECT_NE(other.status().message().find(dir), std::string::npos);
  EXPECT_EQ(ReadLog(dir, 3).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ObjectLogTest, AbandonedStatesAreLostButThePositionSaysWhichSurvived) {
  const std::string dir = FreshDir("abandon");
  auto fs = std::make_shared<testing::DiskFullFileSystem>(rocksdb::FileSystem::Default());
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  {
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir, .node_id = 1, .env = env.get()}));
    log->Append(State(0, 1, "kept"));
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
    fs->set_full(true);  // nothing more reaches the disk
    log->Append(State(64, 1, "lost"));
    ASSERT_TRUE(Eventually([&] { return log->Stats().write_errors > 0; }));
    log->Abandon();  // as if the process were killed now
    fs->set_full(false);
  }
  ASSERT_OK_AND_ASSIGN(LogContents contents, ReadLog(dir));
  EXPECT_EQ(contents.position, 1u);
  ASSERT_EQ(contents.states.size(), 1u);
  EXPECT_EQ(contents.states[0].payload, "kept");
}

TEST(ObjectLogTest, DiskFullIsReportedTheLagGrowsAndWritingResumesWhenThereIsRoom) {
  const std::string dir = FreshDir("disk_full");
  auto fs = std::make_shared<testing::DiskFullFileSystem>(rocksdb::FileSystem::Default());
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  SimulatedClock clock(absl::FromUnixSeconds(1000));
  {
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir,
                                                    .node_id = 1,
                                                    .retry_backoff = absl::Milliseconds(1),
                                                    .max_retry_backoff = absl::Milliseconds(20),
                                                    .clock = &clock,
                                                    .env = env.get()}));
    fs->set_full(true);
    log->Append(State(0, 1, "a"));
    log->Append(State(64, 1, "b"));
    ASSERT_TRUE(Eventually([&] { return log->Stats().write_errors >= 2; }));  // retried, still failing
    clock.Advance(absl::Milliseconds(250));
    ObjectLogStats stats = log->Stats();
    EXPECT_EQ(stats.last_error.code(), absl::StatusCode::kResourceExhausted) << stats.last_error;
    EXPECT_NE(stats.last_error.message().find(dir), std::string::npos) << stats.last_error;
    EXPECT_EQ(stats.persisted_position, 0u);
    EXPECT_EQ(stats.lag_records, 2u);
    EXPECT_EQ(stats.lag_micros, 250000u);
    std::map<std::string, uint64_t> counters;
    log->CounterSource()(counters);
    EXPECT_EQ(counters["log.error"], 1u);
    EXPECT_GE(counters["log.write_errors"], 2u);
    EXPECT_EQ(counters["log.lag_micros"], 250000u);
    EXPECT_EQ(log->WaitForPersisted(absl::Milliseconds(20)).code(), absl::StatusCode::kDeadlineExceeded);

    log->Append(State(0, 2, "a2"));  // the commit path goes on
    clock.Advance(absl::Milliseconds(250));
    EXPECT_EQ(log->Stats().lag_records, 3u);
    EXPECT_EQ(log->Stats().lag_micros, 500000u);

    fs->set_full(false);
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
    stats = log->Stats();
    EXPECT_OK(stats.last_error);
    EXPECT_EQ(stats.persisted_position, 3u);
    EXPECT_EQ(stats.lag_records, 0u);
    EXPECT_EQ(stats.lag_micros, 0u);
  }
  ASSERT_OK_AND_ASSIGN(LogContents contents, ReadLog(dir));
  ASSERT_EQ(contents.states.size(), 2u);
  EXPECT_EQ(contents.states[0].payload, "a2");
  EXPECT_EQ(contents.states[1].payload, "b");
}

TEST(ObjectLogTest, AFullQueueDropsRatherThanHangsAndTheGapStopsEveryReader) {
  const std::string dir = FreshDir("gap");
  auto fs = std::make_shared<testing::DiskFullFileSystem>(rocksdb::FileSystem::Default());
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  {
    ASSERT_OK_AND_ASSIGN(auto log, ObjectLog::Open({.dir = dir,
                                                    .node_id = 1,
                                                    .max_batch_records = 1,
                                                    .max_queued_records = 2,
                                                    .max_enqueue_wait = absl::Milliseconds(1),
                                                    .env = env.get()}));
    fs->set_full(true);
    for (uint32_t i = 0; i < 10; ++i) log->Append(State(64 * i, 1, "x"));  // returns: never blocks for long
    EXPECT_GT(log->Stats().dropped, 0u);
    fs->set_full(false);
    absl::Status waited = log->WaitForPersisted(absl::Seconds(10));
    EXPECT_EQ(waited.code(), absl::StatusCode::kDataLoss) << waited;
  }
  auto read = ReadLog(dir);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition) << read.status();
  EXPECT_NE(read.status().message().find("gap"), std::string::npos) << read.status();
  auto reopened = ObjectLog::Open({.dir = dir, .node_id = 1});
  EXPECT_EQ(reopened.status().code(), absl::StatusCode::kFailedPrecondition) << reopened.status();
}

}  // namespace
}  // namespace fathom::logging
