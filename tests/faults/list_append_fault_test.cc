// List-append (Jepsen/Elle) against three fathomd processes while one of them, or the CM, is killed with
// SIGKILL and later restarted, or paused (SIGSTOP) until the others removed it and then let go (it finds
// itself removed and joins again as a fresh member): a real ZooKeeper server, fathomd over UCX shared memory, and this test
// process joined as a client-only member (as the YCSB driver joins) running transactions with the kv API.
//
// What must hold (issue "Recovery"):
//   - the recorded history (docs/formats/history.md) is strictly serializable (tests/history's checker):
//     no acknowledged append lost or reordered, no read of a state that never was, no stale read;
//   - every acknowledged append is in its final list exactly once, and every list still reads (no key
//     left locked, none lost);
//   - every region ends with f+1 identical replicas (`fathomctl replicas`).
// Operations that end in a failure while the cluster reconfigures are recorded as unknown outcomes (an
// append may or may not have happened), which is what the checker expects of them.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/ycsb/fathom_remote.h"
#include "gtest/gtest.h"
#include "kv/list_append_test_util.h"
#include "tests/history/history.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/zk_cluster.h"
#include "tools/fathomctl/ctl_test_util.h"

namespace fathom {
namespace {

constexpr char kToken[] = "list-append-fault-test-token-0123";
constexpr char kCluster[] = "lafault";
constexpr char kTable[] = "lists";
// Appenders work on kActiveLists lists at a time and move on every kAppendsPerWindow appends, so lists
// stay short enough to sit inline in their buckets.
constexpr int kActiveLists = 4;
constexpr int kListWindows = 100;
constexpr int kListKeys = kActiveLists * kListWindows;
constexpr int64_t kAppendsPerWindow = 40;
constexpr int kAppenders = 2;
constexpr int kReaders = 3;
constexpr absl::Duration kProgressTimeout = absl::Seconds(90);

std::string ListKey(int k) { return absl::StrCat("list", k); }

std::vector<std::string> NodeFlags() {
  return {absl::StrCat("--token=", kToken), "--listen=127.0.0.1:0", "--memory=64M", "--region_size=16M",
          "--threads=1", "--transports=sm", absl::StrCat("--cluster=", kCluster), "--lease_period=2s"};
}

enum class Victim { kMember, kManager };
enum class Fault { kKill, kPause };
struct Scenario {
  Victim victim;
  Fault fault;
};

class ListAppendFaultTest : public ::testing::TestWithParam<Scenario> {
 protected:
  void SetUp() override {
    auto cluster = testing::StartZkCluster(3, NodeFlags());
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    absl::Status all = testing::WaitForAllMembers(cluster_, kToken, absl::Seconds(60));
    ASSERT_TRUE(all.ok()) << all;
  }

  fathomctl::testing::CtlResult Ctl(std::vector<std::string> args) {
    args.push_back(absl::StrCat("--zk=", cluster_.zk->connect_string()));
    args.push_back(absl::StrCat("--cluster=", kCluster));
    args.push_back(absl::StrCat("--token=", kToken));
    return fathomctl::testing::RunCtl(args, absl::Seconds(120));
  }

  // Members in the configuration as node `id` knows it (0 if it does not answer).
  int64_t MembersSeenBy(int id) {
    const testing::FathomdProcess& node = cluster_.nodes[static_cast<size_t>(id - 1)];
    return node.process == nullptr ? 0 : testing::CountersOf(node.control_address, kToken)["txn.members"];
  }

  // Node id of the CM, as the members' counters say (0: none says so yet).
  int ManagerId() {
    for (size_t i = 0; i < cluster_.nodes.size(); ++i) {
      if (cluster_.nodes[i].process == nullptr) continue;
      if (testing::CountersOf(cluster_.nodes[i].control_address, kToken)["coordinator.manager"] == 1) {
        return static_cast<int>(i) + 1;
      }
    }
    return 0;
  }

  testing::ZkCluster cluster_;
};

TEST_P(ListAppendFaultTest, HistoryStaysStrictlySerializableThroughTheFault) {
  fathomctl::testing::CtlResult created = Ctl({"table", "create", kTable, "--buckets=256"});
  ASSERT_EQ(created.exit_code, 0) << created.output;

  ycsb::RemoteFathomOptions options;
  options.member.zookeeper = cluster_.zk->connect_string();
  options.member.cluster = kCluster;
  options.member.token = kToken;
  options.table = kTable;
  auto joined = ycsb::RemoteFathom::Join(options);
  ASSERT_TRUE(joined.ok()) << joined.status();
  std::unique_ptr<ycsb::RemoteFathom> client = std::move(*joined);
  txn::TransactionService& txns = client->txns();
  auto open = [&] { return kv::Table::Open(txns, client->catalog(), kTable); };
  absl::StatusOr<kv::Table> first = open();
  ASSERT_TRUE(first.ok()) << first.status();
  const kv::Table table = *first;
  for (int k = 0; k < kListKeys; ++k) ASSERT_TRUE(table.Put(ListKey(k), "").ok()) << ListKey(k);

  history::HistoryRecorder recorder;
  std::atomic<int64_t> next_value{1};
  std::atomic<int64_t> acknowledged{0};  // appends that committed
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  auto active_list = [&](std::mt19937_64& random) {
    const int64_t window = std::min<int64_t>(next_value.load() / kAppendsPerWindow, kListWindows - 1);
    return static_cast<int>(window * kActiveLists + static_cast<int64_t>(random() % kActiveLists));
  };
  // A failure while the cluster reconfigures is an unknown outcome; anything else is a bug. (A call cut by
  // its connection being replaced ends Cancelled.)
  auto transient = [](const absl::Status& s) {
    return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) || absl::IsAborted(s) || absl::IsCancelled(s);
  };
  for (int process = 0; process < kAppenders + kReaders; ++process) {
    threads.emplace_back([&, process] {
      absl::StatusOr<kv::Table> opened = open();
      ASSERT_TRUE(opened.ok()) << opened.status();
      const kv::Table mine = *opened;
      std::mt19937_64 random(1000 + process);
      const bool reader = process >= kAppenders;
      while (!stop.load()) {
        absl::SleepFor(absl::Microseconds(300 + static_cast<int64_t>(random() % (reader ? 700 : 2000))));
        const int key = active_list(random);
        if (reader) {
          recorder.Invoke(process, {history::MicroOp::Read(key)});
          absl::StatusOr<std::string> value = mine.Get(ListKey(key));
          absl::StatusOr<std::vector<int64_t>> list = value.ok() ? kv::testing::DecodeList(*value) : value.status();
          if (list.ok()) {
            recorder.Complete(process, history::EventType::kOk, {history::MicroOp::Read(key, *list)});
            continue;
          }
          recorder.Complete(process, history::EventType::kInfo, {history::MicroOp::Read(key)});
          EXPECT_TRUE(transient(list.status())) << "GET " << ListKey(key) << ": " << list.status();
          absl::SleepFor(absl::Milliseconds(10));
          continue;
        }
        const int64_t value = next_value++;
        recorder.Invoke(process, {history::MicroOp::Append(key, value)});
        const absl::Status s = kv::testing::AppendToList(txns, mine, ListKey(key), value);
        recorder.Complete(process, kv::testing::AppendOutcome(s), {history::MicroOp::Append(key, value)});
        if (s.ok()) {
          ++acknowledged;
        } else {
          EXPECT_TRUE(transient(s)) << "append to " << ListKey(key) << ": " << s;
          absl::SleepFor(absl::Milliseconds(10));
        }
      }
    });
  }
  // Waits until `more` appends were acknowledged since the call; false after kProgressTimeout.
  auto progress = [&](int64_t more) {
    const int64_t target = acknowledged.load() + more;
    const absl::Time deadline = absl::Now() + kProgressTimeout;
    while (acknowledged.load() < target && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
    return acknowledged.load() >= target;
  };
  auto finish = [&] {
    stop = true;
    for (std::thread& t : threads) t.join();
  };

  if (!progress(100)) {
    finish();
    FAIL() << "no progress before the fault";
  }
  int manager = 0;
  const absl::Time found_by = absl::Now() + absl::Seconds(30);
  while ((manager = ManagerId()) == 0 && absl::Now() < found_by) absl::SleepFor(absl::Milliseconds(50));
  if (manager == 0) {
    finish();
    FAIL() << "no member says it is the CM";
  }
  const Scenario scenario = GetParam();
  const int victim = scenario.victim == Victim::kManager ? manager : (manager % 3) + 1;
  const int witness = victim % 3 + 1;  // another node, which sees the configuration change
  testing::FathomdProcess& node = cluster_.nodes[static_cast<size_t>(victim - 1)];
  const char* what = scenario.fault == Fault::kKill ? "killed" : "paused until removed";
  if (scenario.fault == Fault::kKill) {
    node.process->Signal(SIGKILL);
    ASSERT_TRUE(node.process->Wait(absl::Seconds(30)).ok());
    node.process.reset();
  } else {
    // Stopped past its lease: the others remove it (a condition, seen by a witness), then it runs again.
    node.process->Signal(SIGSTOP);
  }
  const absl::Time faulted = absl::Now();
  if (scenario.fault == Fault::kPause) {
    const absl::Time removed_by = absl::Now() + kProgressTimeout;
    while (MembersSeenBy(witness) != 2 && absl::Now() < removed_by) absl::SleepFor(absl::Milliseconds(50));
    const bool removed = MembersSeenBy(witness) == 2;
    node.process->Signal(SIGCONT);
    if (!removed) {
      finish();
      FAIL() << "node " << victim << " was stopped but never removed";
    }
  }
  const bool recovered = progress(100);
  std::cerr << "[ info ] node " << victim << (victim == manager ? " (the CM)" : "") << " " << what
            << "; 100 more appends " << (recovered ? "acknowledged after " : "not acknowledged within ")
            << absl::Now() - faulted << "\n";
  if (!recovered) {
    finish();
    FAIL() << "no progress after node " << victim << " was " << what;
  }
  if (scenario.fault == Fault::kKill) {
    std::vector<std::string> flags = NodeFlags();
    flags.push_back(absl::StrCat("--zk=", cluster_.zk->connect_string()));
    auto restarted = testing::StartFathomd(victim, flags);
    if (!restarted.ok()) {
      finish();
      FAIL() << restarted.status();
    }
    node = std::move(*restarted);
  }
  // Killed and restarted, or let go after its removal: it joins again as a fresh member.
  const absl::Time listed_by = absl::Now() + kProgressTimeout;
  while ((testing::CountersOf(node.control_address, kToken)["txn.members"] != 3 || MembersSeenBy(witness) != 3) &&
         absl::Now() < listed_by) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  const bool after_rejoin = progress(100);
  finish();
  ASSERT_TRUE(after_rejoin) << "no progress after node " << victim << " joined again";

  // Final reads of every list (retried through what is left of the reconfiguration).
  constexpr int kFinalReader = 100;
  std::vector<std::vector<int64_t>> final_lists(kListKeys);
  for (int key = 0; key < kListKeys; ++key) {
    absl::StatusOr<std::vector<int64_t>> list = absl::UnavailableError("not read");
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (true) {
      recorder.Invoke(kFinalReader, {history::MicroOp::Read(key)});
      absl::StatusOr<std::string> value = table.Get(ListKey(key));
      list = value.ok() ? kv::testing::DecodeList(*value) : value.status();
      if (list.ok()) break;
      recorder.Complete(kFinalReader, history::EventType::kInfo, {history::MicroOp::Read(key)});
      if (!transient(list.status()) || absl::Now() > deadline) break;
      absl::SleepFor(absl::Milliseconds(20));
    }
    ASSERT_TRUE(list.ok()) << ListKey(key) << ": " << list.status();
    final_lists[static_cast<size_t>(key)] = *list;
    recorder.Complete(kFinalReader, history::EventType::kOk, {history::MicroOp::Read(key, *list)});
  }
  if (const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR"); outputs != nullptr) {
    EXPECT_TRUE(recorder.WriteFile(absl::StrCat(outputs, "/list_append_history.jsonl")).ok());
  }
  auto checked = kv::testing::CheckListAppendHistory(recorder.Text(), final_lists, ListKey);
  ASSERT_TRUE(checked.ok()) << checked.status();
  const history::CheckResult& result = *checked;
  EXPECT_GT(result.ok, 300);
  fathomctl::testing::CtlResult replicas = Ctl({"replicas", "--wait=60s"});
  EXPECT_EQ(replicas.exit_code, 0) << replicas.output;
  std::cerr << "[ info ] " << result.ok << " ok, " << result.failed << " failed, " << result.info
            << " unknown list operations\n";
  EXPECT_TRUE(client->Leave().ok());
}

INSTANTIATE_TEST_SUITE_P(Faults, ListAppendFaultTest,
                         ::testing::Values(Scenario{Victim::kMember, Fault::kKill},
                                           Scenario{Victim::kManager, Fault::kKill},
                                           Scenario{Victim::kMember, Fault::kPause},
                                           Scenario{Victim::kManager, Fault::kPause}),
                         [](const ::testing::TestParamInfo<Scenario>& info) {
                           return std::string(info.param.fault == Fault::kKill ? "Kill" : "Pause") +
                                  (info.param.victim == Victim::kManager ? "TheCm" : "AMember");
                         });

}  // namespace
}  // namespace fathom
