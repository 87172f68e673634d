// A kv table resized on a running cluster while clients use it: a real ZooKeeper server, three fathomd
// processes over UCX shared memory, and this test process joined as a client-only member (as the YCSB
// driver joins, bench/ycsb/fathom_remote.h) running GETs and PUTs on the table with the kv API. Meanwhile
// the table is resized six times (grown and shrunk), first with `fathomctl table resize`, then
// with the ResizeTable control call sent to each member in turn, so the resize runs in another process
// than the clients and the catalog change reaches them through ZooKeeper.
//
// What must hold (issue "Resize": no key lost, duplicated or read stale):
//   - list keys: appenders add unique numbers to lists inside transactions (Get(tx) + Put(tx)), readers
//     use the lock-free GET; the recorded history (docs/formats/history.md) must be strictly
//     serializable: a stale read by a GET still on an old generation is a realtime cycle;
//   - at the end every acknowledged append is in its list exactly once;
//   - register keys: each owned by one writer that PUTs and DELETEs it; at the end each holds its last
//     acknowledged value (or is absent if that was a DELETE);
//   - every key is in the table once: after one DELETE a GET finds nothing (a copy that inserted a key
//     twice would still find the second entry);
//   - the catalog names the last generation: six resizes, six epochs more, the last bucket count.
// Tried by hand: with the lock-free GET's epoch check skipped, every run fails (stale reads of the
// retired buckets during the old generation's 50 ms grace: G-single-realtime); with writers not frozen
// out during the copy, every run fails too (a write to the old generation frees the value object the
// new one still points to: GETs find stale references).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/ycsb/fathom_remote.h"
#include "gtest/gtest.h"
#include "kv/list_append_test_util.h"
#include "platform/base/mutex.h"
#include "tests/history/history.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/zk_cluster.h"
#include "tools/fathomctl/ctl_test_util.h"

namespace fathom {
namespace {

constexpr char kToken[] = "fathomd-resize-test-token-01234";
constexpr char kCluster[] = "resize";
constexpr char kTable[] = "lists";
// Appenders work on kActiveLists lists at a time and move to the next ones every kAppendsPerWindow
// appends: so the lists stay short enough to sit in their buckets (inline; 232 bytes by default). An
// out-of-line value object is shared by the old and the new generation, so a GET still on the old one
// would read it fresh and could not show a stale read; an inline value is copied, and the old copy goes
// stale as soon as the new generation takes a write.
constexpr int kActiveLists = 4;
constexpr int kListWindows = 10;
constexpr int kListKeys = kActiveLists * kListWindows;
constexpr int64_t kAppendsPerWindow = 120;  // about 30 four-digit numbers per list
constexpr int kRegisterWriters = 2;
constexpr int kRegistersPerWriter = 8;
// Bucket counts after each resize: grow, grow, shrink, grow, shrink, grow. 40 + 16 keys fit every one.
constexpr uint64_t kCreateBuckets = 12;
constexpr uint64_t kSizes[] = {24, 48, 16, 64, 20, 80};
constexpr int kResizes = sizeof(kSizes) / sizeof(kSizes[0]);

std::string ListKey(int k) { return absl::StrCat("list", k); }
std::string RegisterKey(int writer, int i) { return absl::StrCat("reg", writer, "-", i); }

// What a register key may hold: its last acknowledged state, plus the states of later writes whose
// outcome is unknown (nullopt: absent).
struct Register {
  std::set<std::optional<std::string>> possible = {std::nullopt};
};

class FathomdResizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = testing::StartZkCluster(
        3, {absl::StrCat("--token=", kToken), "--listen=127.0.0.1:0", "--memory=32M", "--region_size=32M",
            "--threads=1", "--transports=sm", absl::StrCat("--cluster=", kCluster), "--zk_session_timeout=4s"});
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    absl::Status all = testing::WaitForAllMembers(cluster_, kToken, absl::Seconds(30));
    ASSERT_TRUE(all.ok()) << all;
  }

  fathomctl::testing::CtlResult Ctl(std::vector<std::string> args) {
    args.push_back(absl::StrCat("--zk=", cluster_.zk->connect_string()));
    args.push_back(absl::StrCat("--cluster=", kCluster));
    args.push_back(absl::StrCat("--token=", kToken));
    return fathomctl::testing::RunCtl(args, absl::Seconds(60));
  }

  // Resize i: the first through fathomctl (from the manager), the others through the control call on
  // members 2, 3, 1.
  absl::Status Resize(int i) {
    if (i == 0) {
      fathomctl::testing::CtlResult r =
          Ctl({"table", "resize", kTable, absl::StrCat("--buckets=", kSizes[0])});
      if (r.exit_code != 0) return absl::InternalError(absl::StrCat("fathomctl table resize: ", r.output));
      if (r.output != absl::StrCat("resized table lists: ", kSizes[0], " buckets, epoch 2\n")) {
        return absl::InternalError(absl::StrCat("fathomctl table resize said: ", r.output));
      }
      return absl::OkStatus();
    }
    auto client = testing::ConnectControl(cluster_.nodes[static_cast<size_t>(i % 3)].control_address, kToken,
                                          absl::Seconds(60));  // a resize copies every entry
    if (!client.ok()) return client.status();
    control::ResizeTableRequest request;
    request.set_name(kTable);
    request.set_buckets(kSizes[i]);
    auto resized = (*client)->ResizeTable(request);
    if (!resized.ok()) return resized.status();
    if (resized->table().buckets() != kSizes[i] || resized->table().epoch() != static_cast<uint64_t>(i) + 2) {
      return absl::InternalError(absl::StrCat("resize ", i, " answered ", resized->table().ShortDebugString()));
    }
    return absl::OkStatus();
  }

  testing::ZkCluster cluster_;
};

TEST_F(FathomdResizeTest, NoKeyLostDuplicatedOrReadStaleWhileResizing) {
  fathomctl::testing::CtlResult created =
      Ctl({"table", "create", kTable, absl::StrCat("--buckets=", kCreateBuckets)});
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
  // Each client thread has a handle of its own, as separate clients do: copies of one handle share its
  // generation, so one thread's refetch would move the others too and hide what a lagging client sees.
  auto open = [&] { return kv::Table::Open(txns, client->catalog(), kTable); };
  absl::StatusOr<kv::Table> first = open();
  ASSERT_TRUE(first.ok()) << first.status();
  const kv::Table table = *first;
  for (int k = 0; k < kListKeys; ++k) ASSERT_TRUE(table.Put(ListKey(k), "").ok());

  history::HistoryRecorder recorder;
  std::atomic<int64_t> next_value{1};
  std::atomic<bool> resizing{true};  // clients go on (up to a cap) until the resizer is done
  std::atomic<bool> in_resize{false};
  std::atomic<int> during_resize{0};  // operations that completed while a resize call was running
  std::atomic<int> resizes{0};
  absl::Status resize_error;
  std::vector<std::thread> threads;
  std::vector<std::map<std::string, Register>> registers(kRegisterWriters);  // one map per writer thread

  threads.emplace_back([&] {
    for (int i = 0; i < kResizes; ++i) {
      absl::SleepFor(absl::Milliseconds(150));  // operations between resizes too
      in_resize = true;
      absl::Status s = Resize(i);
      in_resize = false;
      if (!s.ok()) {
        resize_error = s;
        break;
      }
      ++resizes;
    }
    absl::SleepFor(absl::Milliseconds(150));
    resizing = false;
  });
  auto keep_going = [&](int done) {
    return done < 50 || (resizing.load() && done < 20000);
  };
  // Paced, or they starve the freeze on 2 cores; appenders slower, so the lists stay short.
  auto pace = [](std::mt19937_64& random, int64_t max_micros) {
    absl::SleepFor(absl::Microseconds(300 + static_cast<int64_t>(random() % static_cast<uint64_t>(max_micros))));
  };
  auto active_list = [&](std::mt19937_64& random) {
    const int64_t window = std::min<int64_t>(next_value.load() / kAppendsPerWindow, kListWindows - 1);
    return static_cast<int>(window * kActiveLists + static_cast<int64_t>(random() % kActiveLists));
  };
  // Appenders (processes 0, 1) and lock-free readers (2, 3, 4) on the list keys.
  for (int process = 0; process < 5; ++process) {
    threads.emplace_back([&, process] {
      absl::StatusOr<kv::Table> opened = open();
      ASSERT_TRUE(opened.ok()) << opened.status();
      const kv::Table table = *opened;
      std::mt19937_64 random(1000 + process);
      const bool reader = process >= 2;
      for (int done = 0; keep_going(done); ++done) {
        pace(random, reader ? 700 : 2000);
        const int key = active_list(random);
        if (reader) {
          recorder.Invoke(process, {history::MicroOp::Read(key)});
          absl::StatusOr<std::string> value = table.Get(ListKey(key));
          absl::StatusOr<std::vector<int64_t>> list = value.ok() ? kv::testing::DecodeList(*value) : value.status();
          if (list.ok()) {
            recorder.Complete(process, history::EventType::kOk, {history::MicroOp::Read(key, *list)});
          } else {
            recorder.Complete(process, history::EventType::kInfo, {history::MicroOp::Read(key)});
            ADD_FAILURE() << "GET " << ListKey(key) << ": " << list.status();
          }
          during_resize += in_resize.load();
          continue;
        }
        const int64_t value = next_value++;
        recorder.Invoke(process, {history::MicroOp::Append(key, value)});
        const absl::Status s = kv::testing::AppendToList(txns, table, ListKey(key), value);
        recorder.Complete(process, kv::testing::AppendOutcome(s), {history::MicroOp::Append(key, value)});
        EXPECT_TRUE(s.ok() || absl::IsAborted(s)) << "append to " << ListKey(key) << ": " << s;
        during_resize += in_resize.load();
      }
    });
  }
  // Register writers: each owns its keys, so the last acknowledged write of each is known.
  for (int writer = 0; writer < kRegisterWriters; ++writer) {
    threads.emplace_back([&, writer] {
      absl::StatusOr<kv::Table> opened = open();
      ASSERT_TRUE(opened.ok()) << opened.status();
      const kv::Table table = *opened;
      std::mt19937_64 random(2000 + writer);
      std::map<std::string, Register>& mine = registers[static_cast<size_t>(writer)];
      for (int done = 0; keep_going(done); ++done) {
        pace(random, 700);
        const std::string key = RegisterKey(writer, static_cast<int>(random() % kRegistersPerWriter));
        Register& reg = mine[key];
        if (random() % 5 == 0) {
          absl::Status s = table.Delete(key);
          if (s.ok() || absl::IsNotFound(s)) {
            reg.possible = {std::nullopt};
          } else {
            reg.possible.insert(std::nullopt);
            ADD_FAILURE() << "DELETE " << key << ": " << s;
          }
        } else {
          const std::string value = absl::StrCat("w", writer, "-", done);
          absl::Status s = table.Put(key, value);
          if (s.ok()) {
            reg.possible = {value};
          } else {
            reg.possible.insert(value);
            ADD_FAILURE() << "PUT " << key << ": " << s;
          }
        }
        during_resize += in_resize.load();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(resize_error.ok()) << resize_error;
  ASSERT_EQ(resizes.load(), kResizes);
  EXPECT_GT(during_resize.load(), 20) << "too few operations overlapped the resizes";

  // Final reads of every list: the history must be strictly serializable, and every acknowledged
  // append must be in its list exactly once.
  constexpr int kFinalReader = 100;
  std::vector<std::vector<int64_t>> final_lists(kListKeys);
  for (int key = 0; key < kListKeys; ++key) {
    recorder.Invoke(kFinalReader, {history::MicroOp::Read(key)});
    absl::StatusOr<std::string> value = table.Get(ListKey(key));
    absl::StatusOr<std::vector<int64_t>> list = value.ok() ? kv::testing::DecodeList(*value) : value.status();
    ASSERT_TRUE(list.ok()) << ListKey(key) << ": " << list.status();
    final_lists[static_cast<size_t>(key)] = *list;
    recorder.Complete(kFinalReader, history::EventType::kOk, {history::MicroOp::Read(key, *list)});
  }
  // Kept for a look after a failure (bazel-testlogs/.../test.outputs), or `check_history` on it.
  if (const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR"); outputs != nullptr) {
    EXPECT_TRUE(recorder.WriteFile(absl::StrCat(outputs, "/resize_history.jsonl")).ok());
  }
  auto checked = kv::testing::CheckListAppendHistory(recorder.Text(), final_lists, ListKey);
  ASSERT_TRUE(checked.ok()) << checked.status() << "\n" << recorder.Text();
  const history::CheckResult& result = *checked;
  EXPECT_GT(result.ok, 200);

  // Register keys hold their last acknowledged state.
  std::vector<std::string> present;
  for (int key = 0; key < kListKeys; ++key) present.push_back(ListKey(key));
  for (int writer = 0; writer < kRegisterWriters; ++writer) {
    for (int i = 0; i < kRegistersPerWriter; ++i) {
      const std::string key = RegisterKey(writer, i);
      const Register& reg = registers[static_cast<size_t>(writer)][key];
      absl::StatusOr<std::string> value = table.Get(key);
      ASSERT_TRUE(value.ok() || absl::IsNotFound(value.status())) << key << ": " << value.status();
      const std::optional<std::string> found = value.ok() ? std::optional<std::string>(*value) : std::nullopt;
      EXPECT_TRUE(reg.possible.count(found) == 1)
          << key << " holds " << found.value_or("nothing") << ", not its last acknowledged state";
      if (found.has_value()) present.push_back(key);
    }
  }
  // Every present key once: after one DELETE nothing is left of it.
  for (const std::string& key : present) {
    ASSERT_TRUE(table.Delete(key).ok()) << key;
    absl::StatusOr<std::string> again = table.Get(key);
    EXPECT_TRUE(absl::IsNotFound(again.status())) << key << " is in the table twice: " << again.status();
  }

  // The catalog names the last generation, on every member.
  for (const testing::FathomdProcess& node : cluster_.nodes) {
    auto member = testing::ConnectControl(node.control_address, kToken);
    ASSERT_TRUE(member.ok()) << member.status();
    auto listed = (*member)->ListTables();
    ASSERT_TRUE(listed.ok()) << listed.status();
    ASSERT_EQ(listed->tables_size(), 1);
    EXPECT_EQ(listed->tables(0).buckets(), kSizes[kResizes - 1]);
    EXPECT_EQ(listed->tables(0).epoch(), static_cast<uint64_t>(kResizes) + 1);
  }
  std::cerr << "[ info ] " << result.ok << " ok, " << result.failed << " failed, " << result.info
            << " unknown list operations; " << during_resize.load() << " operations during the resizes\n";
  EXPECT_TRUE(client->Leave().ok());
}

}  // namespace
}  // namespace fathom
