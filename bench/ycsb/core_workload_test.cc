#include "bench/ycsb/core_workload.h"

#include <map>

#include "absl/time/clock.h"
#include "bench/ycsb/key_naming.h"
#include "bench/ycsb/memory_backend.h"
#include "bench/ycsb/runner.h"
#include "gtest/gtest.h"
#include "platform/base/mutex.h"

namespace fathom::ycsb {
namespace {

// YCSB's workload files, as bench/workloads has them (kept inline so this test needs no runfiles).
Properties Workload(char letter) {
  Properties props;
  std::string text = "recordcount=1000\noperationcount=1000\nfieldcount=10\nfieldlength=100\n"
                     "readallfields=true\nwriteallfields=false\n";
  switch (letter) {
    case 'a':
      text += "readproportion=0.5\nupdateproportion=0.5\nrequestdistribution=zipfian\n";
      break;
    case 'd':
      text += "readproportion=0.95\nupdateproportion=0\ninsertproportion=0.05\nrequestdistribution=latest\n";
      break;
    case 'e':
      text += "readproportion=0\nupdateproportion=0\nscanproportion=0.95\ninsertproportion=0.05\n"
              "requestdistribution=zipfian\nmaxscanlength=100\nscanlengthdistribution=uniform\n";
      break;
    case 'f':
      text += "readproportion=0.5\nupdateproportion=0\nreadmodifywriteproportion=0.5\nrequestdistribution=zipfian\n";
      break;
  }
  EXPECT_TRUE(props.ParseText(text).ok());
  return props;
}

std::unique_ptr<CoreWorkload> MustCreate(const Properties& props) {
  absl::StatusOr<std::unique_ptr<CoreWorkload>> workload = CoreWorkload::Create(props);
  EXPECT_TRUE(workload.ok()) << workload.status();
  return std::move(workload).value();
}

BackendFactory MemoryFactory(MemoryStore* store) {
  return [store] { return std::make_unique<MemoryBackend>(store); };
}

PhaseResult MustRun(CoreWorkload& workload, MemoryStore* store, RunOptions options) {
  absl::StatusOr<PhaseResult> result = RunPhase(workload, MemoryFactory(store), options);
  EXPECT_TRUE(result.ok()) << result.status();
  return std::move(result).value();
}

size_t StoreSize(MemoryStore& store) {
  MutexLock lock(&store.keys_mu);
  return store.keys.size();
}

TEST(CoreWorkloadTest, DefaultsAreYcsbs) {
  Properties props;
  ASSERT_TRUE(props.ParseText("recordcount=10\noperationcount=20\n").ok());
  absl::StatusOr<WorkloadConfig> c = WorkloadConfig::FromProperties(props);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->table, "usertable");
  EXPECT_EQ(c->field_count, 10);
  EXPECT_EQ(c->field_length, 100);
  EXPECT_EQ(c->field_length_distribution, "constant");
  EXPECT_TRUE(c->read_all_fields);
  EXPECT_FALSE(c->write_all_fields);
  EXPECT_DOUBLE_EQ(c->read_proportion, 0.95);
  EXPECT_DOUBLE_EQ(c->update_proportion, 0.05);
  EXPECT_EQ(c->request_distribution, "uniform");
  EXPECT_EQ(c->max_scan_length, 1000);
  EXPECT_FALSE(c->ordered_inserts);
  EXPECT_EQ(c->zero_padding, 1);
  EXPECT_EQ(c->insert_count, 10);
}

TEST(CoreWorkloadTest, RejectsBadConfigurations) {
  for (const char* text : {"operationcount=5\n", "recordcount=0\noperationcount=5\n",
                           "recordcount=5\noperationcount=5\nrequestdistribution=exponential\n",
                           "recordcount=5\noperationcount=5\ninsertorder=random\n",
                           "recordcount=5\noperationcount=5\nreadproportion=0\nupdateproportion=0\n",
                           "recordcount=5\noperationcount=5\nfieldlengthdistribution=histogram\n",
                           "recordcount=5\noperationcount=5\nreadproportion=lots\n"}) {
    Properties props;
    ASSERT_TRUE(props.ParseText(text).ok());
    EXPECT_FALSE(CoreWorkload::Create(props).ok()) << text;
  }
}

TEST(CoreWorkloadTest, OperationChooserFollowsProportions) {
  Properties props = Workload('a');
  ASSERT_TRUE(props.SetFromAssignment("scanproportion=0.1").ok());
  ASSERT_TRUE(props.SetFromAssignment("readproportion=0.4").ok());
  auto workload = MustCreate(props);
  auto state = workload->NewThreadState(11);
  std::map<Operation, int> counts;
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) ++counts[workload->ChooseOperation(*state)];
  EXPECT_NEAR(counts[Operation::kRead] / double{kDraws}, 0.4, 0.01);
  EXPECT_NEAR(counts[Operation::kUpdate] / double{kDraws}, 0.5, 0.01);
  EXPECT_NEAR(counts[Operation::kScan] / double{kDraws}, 0.1, 0.01);
  EXPECT_EQ(counts[Operation::kInsert], 0);
}

TEST(CoreWorkloadTest, LoadWritesRecordcountRecordsUnderYcsbKeys) {
  auto workload = MustCreate(Workload('a'));
  MemoryStore store;
  const PhaseResult load = MustRun(*workload, &store, {.phase = Phase::kLoad, .threads = 2});
  EXPECT_EQ(load.operations, 1000u);
  EXPECT_EQ(load.measurements.Returns(Operation::kInsert, ReturnCode::kOk), 1000u);
  ASSERT_EQ(StoreSize(store), 1000u);
  MemoryBackend db(&store);
  for (int64_t k : {0, 1, 999}) {
    Record record;
    ASSERT_TRUE(db.Read("usertable", BuildKeyName(k, false, 1), nullptr, &record).ok()) << k;
    EXPECT_EQ(record.size(), 10u);
    EXPECT_EQ(record.at("field9").size(), 100u);
  }
  Record record;
  EXPECT_TRUE(db.Read("usertable", "user6284781860667377211", nullptr, &record).ok());
}

TEST(CoreWorkloadTest, WorkloadAReadsAndUpdatesLoadedRecords) {
  auto workload = MustCreate(Workload('a'));
  MemoryStore store;
  MustRun(*workload, &store, {.phase = Phase::kLoad, .threads = 2});
  const PhaseResult run = MustRun(*workload, &store, {.phase = Phase::kRun, .threads = 2, .seed = 3});
  const Measurements& m = run.measurements;
  EXPECT_EQ(run.operations, 1000u);
  EXPECT_EQ(m.Returns(Operation::kRead, ReturnCode::kOk) + m.Returns(Operation::kUpdate, ReturnCode::kOk), 1000u);
  EXPECT_NEAR(m.Returns(Operation::kRead, ReturnCode::kOk), 500, 80);
  EXPECT_EQ(m.Latencies(Operation::kRead, /*failed=*/true).count(), 0u);
  EXPECT_EQ(StoreSize(store), 1000u);  // updates touch existing records only
}

TEST(CoreWorkloadTest, WorkloadDInsertsNewKeysAndReadsThem) {
  auto workload = MustCreate(Workload('d'));
  MemoryStore store;
  MustRun(*workload, &store, {.phase = Phase::kLoad, .threads = 1});
  const PhaseResult run = MustRun(*workload, &store, {.phase = Phase::kRun, .threads = 2, .seed = 4});
  const uint64_t inserts = run.measurements.Returns(Operation::kInsert, ReturnCode::kOk);
  EXPECT_GT(inserts, 20u);
  EXPECT_EQ(StoreSize(store), 1000u + inserts);
  // "latest" only picks acknowledged keys, so no read misses.
  EXPECT_EQ(run.measurements.Returns(Operation::kRead, ReturnCode::kNotFound), 0u);
  EXPECT_EQ(run.measurements.Returns(Operation::kRead, ReturnCode::kOk) + inserts, 1000u);
}

TEST(CoreWorkloadTest, WorkloadEScansAndWorkloadFReadModifyWrites) {
  {
    auto workload = MustCreate(Workload('e'));
    MemoryStore store;
    MustRun(*workload, &store, {.phase = Phase::kLoad, .threads = 1});
    const PhaseResult run = MustRun(*workload, &store, {.phase = Phase::kRun, .threads = 1, .seed = 5});
    EXPECT_GT(run.measurements.Returns(Operation::kScan, ReturnCode::kOk), 900u);
  }
  {
    auto workload = MustCreate(Workload('f'));
    MemoryStore store;
    MustRun(*workload, &store, {.phase = Phase::kLoad, .threads = 1});
    const PhaseResult run = MustRun(*workload, &store, {.phase = Phase::kRun, .threads = 1, .seed = 6});
    const uint64_t rmw = run.measurements.Returns(Operation::kReadModifyWrite, ReturnCode::kOk);
    EXPECT_NEAR(rmw, 500, 80);
    // Each read-modify-write also counts its read and its update, as in YCSB.
    EXPECT_EQ(run.measurements.Returns(Operation::kUpdate, ReturnCode::kOk), rmw);
    EXPECT_EQ(run.measurements.Returns(Operation::kRead, ReturnCode::kOk), 1000u);
    EXPECT_EQ(run.operations, 1000u);
  }
}

TEST(CoreWorkloadTest, SameSeedSameOperations) {
  auto first = MustCreate(Workload('a'));
  auto second = MustCreate(Workload('a'));
  auto a = first->NewThreadState(42);
  auto b = second->NewThreadState(42);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(first->ChooseOperation(*a), second->ChooseOperation(*b));
    ASSERT_EQ(first->NextKeynum(*a), second->NextKeynum(*b));
  }
}

// Records what DoTransaction asks of the store, to compare with the plans.
class RecordingBackend final : public Backend {
 public:
  absl::Status Read(const std::string&, const std::string& key, const FieldList* fields, Record*) override {
    calls.push_back("read " + key + (fields ? " " + fields->at(0) : ""));
    return absl::OkStatus();
  }
  absl::Status Update(const std::string&, const std::string& key, const Record& values) override {
    calls.push_back("update " + key + " " + values.begin()->first + "=" + values.begin()->second);
    return absl::OkStatus();
  }
  absl::Status Insert(const std::string&, const std::string& key, const Record& values) override {
    calls.push_back("insert " + key + " " + std::to_string(values.size()));
    return absl::OkStatus();
  }
  absl::Status Delete(const std::string&, const std::string& key) override { return absl::OkStatus(); }
  std::vector<std::string> calls;
};

TEST(CoreWorkloadTest, PlansAreTheOperationsDoTransactionRuns) {
  // Workload F's mix with single-field reads: every kind of draw (keys, fields, values) is exercised.
  Properties props = Workload('f');
  ASSERT_TRUE(props.SetFromAssignment("readallfields=false").ok());
  ASSERT_TRUE(props.SetFromAssignment("insertproportion=0.1").ok());
  auto planner = MustCreate(props);
  auto runner = MustCreate(props);
  auto a = planner->NewThreadState(9);
  auto b = runner->NewThreadState(9);
  RecordingBackend db;
  for (int i = 0; i < 500; ++i) {
    const PlannedOperation plan = planner->PlanTransaction(*a);
    db.calls.clear();
    ASSERT_EQ(runner->DoTransaction(db, *b, nullptr), plan.op);
    ASSERT_TRUE(planner->Finish(plan).ok());
    ASSERT_FALSE(db.calls.empty());
    const std::string key = db.calls[0].substr(db.calls[0].find(' ') + 1, plan.key.size());
    EXPECT_EQ(key, plan.key) << i;
    if (plan.op == Operation::kRead) {
      EXPECT_EQ(db.calls[0], "read " + plan.key + " " + plan.fields->at(0));
    }
    if (plan.op == Operation::kReadModifyWrite) {
      ASSERT_EQ(db.calls.size(), 2u);
      EXPECT_EQ(db.calls[1], "update " + plan.key + " " + plan.values.begin()->first + "=" + plan.values.begin()->second);
    }
    if (plan.op == Operation::kInsert) {
      EXPECT_EQ(db.calls[0], "insert " + plan.key + " 10");
    }
  }
}

TEST(CoreWorkloadTest, BankTransfersConserveTheTotal) {
  Properties props;
  ASSERT_TRUE(props.ParseText("recordcount=50\noperationcount=4000\nfieldcount=1\nreadproportion=0\n"
                              "updateproportion=0\ntransferproportion=1\ninitialbalance=500\n"
                              "requestdistribution=zipfian\n").ok());
  auto workload = MustCreate(props);
  MemoryStore store;
  MustRun(*workload, &store, {.phase = Phase::kLoad, .threads = 2});
  const PhaseResult run = MustRun(*workload, &store, {.phase = Phase::kRun, .threads = 4});
  EXPECT_EQ(run.measurements.Returns(Operation::kTransfer, ReturnCode::kOk), 4000u);
  MemoryBackend db(&store);
  absl::StatusOr<int64_t> total = workload->SumBalances(db);
  ASSERT_TRUE(total.ok()) << total.status();
  EXPECT_EQ(*total, 50 * 500);
  EXPECT_EQ(workload->ExpectedTotal(), 50 * 500);
  // Money did move: some account is off its initial balance.
  std::vector<std::string> keys;
  {
    MutexLock lock(&store.keys_mu);
    keys.assign(store.keys.begin(), store.keys.end());
  }
  bool moved = false;
  for (const std::string& key : keys) {
    Record record;
    ASSERT_TRUE(db.Read("usertable", key, nullptr, &record).ok()) << key;
    moved |= record.at(kBalanceField) != "500";
  }
  EXPECT_TRUE(moved);
  // A record that lost its balance makes the check fail loudly.
  Record broken;
  ASSERT_TRUE(db.Read("usertable", keys.front(), nullptr, &broken).ok());
  broken.erase(kBalanceField);
  ASSERT_TRUE(db.Insert("usertable", keys.front(), broken).ok());
  EXPECT_EQ(workload->SumBalances(db).status().code(), absl::StatusCode::kDataLoss);
}

TEST(CoreWorkloadTest, BankRefusesInsertsAndTooFewAccounts) {
  for (const char* bad : {"recordcount=10\noperationcount=1\ntransferproportion=1\ninsertproportion=0.1\n",
                          "recordcount=1\noperationcount=1\ntransferproportion=1\n",
                          "recordcount=10\noperationcount=1\ntransferproportion=1\nmaxtransfer=0\n",
                          "recordcount=10\noperationcount=1\ntransferproportion=-1\n"}) {
    Properties props;
    ASSERT_TRUE(props.ParseText(bad).ok());
    EXPECT_EQ(CoreWorkload::Create(props).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(CoreWorkloadTest, WarmupIsNotMeasuredAndTargetThrottles) {
  auto workload = MustCreate(Workload('a'));
  MemoryStore store;
  MustRun(*workload, &store, {.phase = Phase::kLoad, .threads = 1});
  const PhaseResult warm = MustRun(*workload, &store, {.phase = Phase::kRun, .threads = 2, .warmup_ops = 300});
  EXPECT_EQ(warm.operations, 1000u);
  EXPECT_EQ(warm.measurements.Returns(Operation::kRead, ReturnCode::kOk) +
                warm.measurements.Returns(Operation::kUpdate, ReturnCode::kOk),
            1000u);
  // 1000 operations at 5000/s take at least 0.2 s minus one tick per thread (only a lower bound is
  // checked: a loaded machine may take longer, never shorter).
  const PhaseResult throttled = MustRun(*workload, &store, {.phase = Phase::kRun, .threads = 2, .target_ops_per_sec = 5000});
  EXPECT_GE(throttled.runtime, absl::Milliseconds(195));
}

// Fails every operation, as a dead server would.
class FailingBackend final : public Backend {
 public:
  absl::Status Read(const std::string&, const std::string&, const FieldList*, Record*) override { return Down(); }
  absl::Status Update(const std::string&, const std::string&, const Record&) override { return Down(); }
  absl::Status Insert(const std::string&, const std::string&, const Record&) override { return Down(); }
  absl::Status Delete(const std::string&, const std::string&) override { return Down(); }

 private:
  static absl::Status Down() { return absl::UnavailableError("server down"); }
};

TEST(CoreWorkloadTest, BackendErrorsAreCountedNotFatal) {
  auto workload = MustCreate(Workload('a'));
  BackendFactory failing = [] { return std::make_unique<FailingBackend>(); };
  absl::StatusOr<PhaseResult> run = RunPhase(*workload, failing, {.phase = Phase::kRun, .threads = 2});
  ASSERT_TRUE(run.ok());
  const Measurements& m = run->measurements;
  EXPECT_EQ(m.Returns(Operation::kRead, ReturnCode::kError) + m.Returns(Operation::kUpdate, ReturnCode::kError),
            1000u);
  EXPECT_EQ(m.Latencies(Operation::kRead, false).count() + m.Latencies(Operation::kUpdate, false).count(), 0u);
  EXPECT_EQ(m.Latencies(Operation::kRead, true).count() + m.Latencies(Operation::kUpdate, true).count(), 1000u);
}

class NoInitBackend final : public Backend {
 public:
  absl::Status Init() override { return absl::UnavailableError("connection refused"); }
  absl::Status Read(const std::string&, const std::string&, const FieldList*, Record*) override { return {}; }
  absl::Status Update(const std::string&, const std::string&, const Record&) override { return {}; }
  absl::Status Insert(const std::string&, const std::string&, const Record&) override { return {}; }
  absl::Status Delete(const std::string&, const std::string&) override { return {}; }
};

TEST(CoreWorkloadTest, InitFailureFailsThePhase) {
  auto workload = MustCreate(Workload('a'));
  BackendFactory broken = [] { return std::make_unique<NoInitBackend>(); };
  absl::StatusOr<PhaseResult> run = RunPhase(*workload, broken, {.phase = Phase::kRun, .threads = 2});
  EXPECT_EQ(run.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace fathom::ycsb

namespace fathom::ycsb {
namespace {

// maxexecutiontime: the run stops starting operations that long after its clock started, whatever is left
// of operationcount.
// Workload A with `assignment`, loaded into `store`.
std::unique_ptr<CoreWorkload> LoadedWorkloadA(const std::string& assignment, MemoryStore* store) {
  Properties props = Workload('a');
  EXPECT_TRUE(props.SetFromAssignment(assignment).ok());
  std::unique_ptr<CoreWorkload> workload = MustCreate(props);
  MustRun(*workload, store, {.phase = Phase::kLoad, .threads = 2});
  return workload;
}

TEST(CoreWorkloadTest, TheRunStopsAtMaxExecutionTime) {
  MemoryStore store;
  std::unique_ptr<CoreWorkload> workload = LoadedWorkloadA("operationcount=1000000000000", &store);
  const PhaseResult run = MustRun(*workload, &store,
                                  {.phase = Phase::kRun, .threads = 2, .target_ops_per_sec = 2000,
                                   .max_execution_time = absl::Milliseconds(300)});
  EXPECT_GT(run.operations, 0u);
  EXPECT_LT(run.operations, 100000u);  // at 2000 ops/s the budget would last for years
}

// VerifyRecords reads every loaded record once and names what is missing or incomplete.
TEST(CoreWorkloadTest, VerifyRecordsFindsMissingAndIncompleteRecords) {
  MemoryStore store;
  std::unique_ptr<CoreWorkload> workload = LoadedWorkloadA("recordcount=50", &store);
  MemoryBackend db(&store);
  CoreWorkload::VerifyReport all = workload->VerifyRecords(db);
  EXPECT_EQ(all.records, 50);
  EXPECT_EQ(all.ok, 50);
  EXPECT_TRUE(all.errors.empty());
  ASSERT_TRUE(db.Delete("usertable", workload->BuildKeyName(3)).ok());
  ASSERT_TRUE(db.Delete("usertable", workload->BuildKeyName(5)).ok());
  ASSERT_TRUE(db.Insert("usertable", workload->BuildKeyName(5), Record{{"field0", "only one"}}).ok());
  CoreWorkload::VerifyReport broken = workload->VerifyRecords(db);
  EXPECT_EQ(broken.records, 50);
  EXPECT_EQ(broken.ok, 48);
  EXPECT_EQ(broken.missing, 1);
  EXPECT_EQ(broken.failed, 1);
  bool named = false;
  for (const auto& [what, count] : broken.errors) named = named || what.rfind(workload->BuildKeyName(5) + ": ", 0) == 0;
  EXPECT_TRUE(named) << "the incomplete record's key is not named";
}

}  // namespace
}  // namespace fathom::ycsb
