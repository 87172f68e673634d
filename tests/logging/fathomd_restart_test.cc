// Whole-cluster restart of real fathomd processes (UCX shared memory) from their SSD logs: three nodes
// with data directories run bank transfers coordinated by this test process (node 4), are SIGKILLed
// together, and are started again from the same directories. Also: a damaged log stops startup with an
// error naming the node, directory and key.
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "logging/object_log.h"
#include "logging/record_format.h"
#include "platform/base/status_test_macros.h"
#include "rocksdb/db.h"
#include "tests/logging/restart_cluster.h"
#include "tests/logging/transfers.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/fresh_dir.h"
#include "txn/txn.h"
#include "tests/workloads/support.h"

namespace fathom::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kAccounts = 24;
constexpr int64_t kInitial = 100;

std::string FreshDir(const std::string& name) {
  std::string dir = fathom::testing::FreshTestDir("fathomd_restart_test", name);
  fs::create_directories(dir);
  return dir;
}

int64_t Sum(const std::vector<int64_t>& balances) { return std::accumulate(balances.begin(), balances.end(), int64_t{0}); }

// Every node runs in the same, new epoch, and rebuilt its memory from the logs.
void ExpectRestarted(RestartCluster& cluster, uint64_t previous_epoch, bool expect_nothing_adopted) {
  EXPECT_GT(cluster.epoch(), previous_epoch);
  for (int id = 1; id <= RestartCluster::kNodes; ++id) {
    ASSERT_OK_AND_ASSIGN(auto counters, cluster.Counters(id));
    EXPECT_EQ(counters.at("txn.epoch"), cluster.epoch()) << "node " << id;
    // 24 accounts round robin over 3 nodes: 8 primaries each, and (f = 1) 8 backups of a neighbour's.
    EXPECT_GE(counters.at("restart.primaries"), uint64_t{kAccounts / 3}) << "node " << id;
    EXPECT_GE(counters.at("restart.backups"), uint64_t{kAccounts / 3}) << "node " << id;
    EXPECT_EQ(counters.at("log.error"), 0u) << "node " << id;
    if (expect_nothing_adopted) {
      // Every log had caught up: each node's own log already held the newest state of all it holds.
      EXPECT_EQ(counters.at("restart.adopted"), 0u) << "node " << id;
    }
    std::cerr << "[ info ] node " << id << " restarted: " << counters.at("restart.primaries") << " primaries, "
              << counters.at("restart.backups") << " backups, " << counters.at("restart.adopted")
              << " states only a peer had logged\n";
  }
}

TEST(FathomdRestartTest, AfterTheLogsCaughtUpASigkilledClusterComesBackWithEveryAcknowledgedTransfer) {
  ASSERT_OK_AND_ASSIGN(auto cluster, RestartCluster::Start(FreshDir("caught_up")));
  ASSERT_OK_AND_ASSIGN(auto accounts, CreateAccounts(cluster->client(), cluster->data_nodes(), kAccounts, kInitial));
  for (int round = 1; round <= 2; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    {
      TransferClients clients(cluster->client(), accounts, {.clients = 4, .transfers_each = 50, .seed = uint64_t(round)});
      clients.Join();
      ASSERT_OK(clients.first_error());
      EXPECT_GT(clients.acknowledged(), 0u);
    }
    ASSERT_OK_AND_ASSIGN(std::vector<int64_t> before, ReadBalances(cluster->client(), accounts));
    ASSERT_EQ(Sum(before), kAccounts * kInitial);
    ASSERT_OK_AND_ASSIGN(auto persisted, cluster->WaitForLogsCaughtUp());
    for (const auto& [id, position] : persisted) {
      EXPECT_GT(position, 0u) << "node " << id;
      std::cerr << "[ info ] node " << id << " persisted position " << position << " before the kill\n";
    }

    const uint64_t epoch = cluster->epoch();
    cluster->KillAll();
    ASSERT_OK(cluster->Restart());
    ExpectRestarted(*cluster, epoch, /*expect_nothing_adopted=*/true);
    // Every account is where the last acknowledged transfers left it.
    ASSERT_OK_AND_ASSIGN(std::vector<int64_t> after, ReadBalances(cluster->client(), accounts));
    EXPECT_EQ(after, before);
  }
  // And it serves: more transfers, the total conserved.
  TransferClients clients(cluster->client(), accounts, {.clients = 4, .transfers_each = 30, .seed = 9});
  clients.Join();
  ASSERT_OK(clients.first_error());
  EXPECT_GT(clients.acknowledged(), 0u);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> last, ReadBalances(cluster->client(), accounts));
  EXPECT_EQ(Sum(last), kAccounts * kInitial);
}

// Sync durability on processes: a client node (not a member) commits transfers with Durability::kSync,
// one after another, and every fathomd is SIGKILLed right after the last acknowledgement, with nothing
// waited for. Every acknowledged transfer must come back. (With kAsync the last ones are lost: their log
// epoch had not closed.)
TEST(FathomdRestartTest, SyncTransfersAcknowledgedJustBeforeAKillAllComeBack) {
  ASSERT_OK_AND_ASSIGN(auto cluster, RestartCluster::Start(FreshDir("sync")));
  ASSERT_OK_AND_ASSIGN(auto accounts, CreateAccounts(cluster->client(), cluster->data_nodes(), kAccounts, kInitial));
  std::vector<int64_t> balances(kAccounts, kInitial);
  for (int i = 0; i < 40; ++i) {
    const size_t from = (7 * i) % kAccounts, to = (7 * i + 5) % kAccounts;
    absl::Status s = txn::RunTransaction(cluster->client(), [&](txn::Transaction& tx) -> absl::Status {
      tx.SetDurability(txn::Durability::kSync);
      auto a = tx.Read(accounts[from]);
      if (!a.ok()) return a.status();
      auto b = tx.Read(accounts[to]);
      if (!b.ok()) return b.status();
      if (absl::Status w = tx.Write(accounts[from], txn::workloads::EncodeInt(*txn::workloads::DecodeInt(*a) - 3));
          !w.ok()) {
        return w;
      }
      return tx.Write(accounts[to], txn::workloads::EncodeInt(*txn::workloads::DecodeInt(*b) + 3));
    });
    ASSERT_TRUE(s.ok()) << "transfer " << i << ": " << s;
    balances[from] -= 3;
    balances[to] += 3;
  }
  ASSERT_OK_AND_ASSIGN(auto stats, cluster->client().Stats());
  EXPECT_GT(stats.coordinator.sync_waits, 0u);
  const uint64_t epoch = cluster->epoch();
  cluster->KillAll();
  ASSERT_OK(cluster->Restart());
  ExpectRestarted(*cluster, epoch, /*expect_nothing_adopted=*/false);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> restored, ReadBalances(cluster->client(), accounts));
  EXPECT_EQ(restored, balances);
}

TEST(FathomdRestartTest, KilledMidWorkloadTheAccountsComeBackAsAConsistentCutWithTheTotalConserved) {
  ASSERT_OK_AND_ASSIGN(auto cluster, RestartCluster::Start(FreshDir("mid_workload")));
  ASSERT_OK_AND_ASSIGN(auto accounts, CreateAccounts(cluster->client(), cluster->data_nodes(), kAccounts, kInitial));
  {
    TransferClients clients(cluster->client(), accounts, {.clients = 4, .transfers_each = 30, .seed = 3});
    clients.Join();
    ASSERT_OK(clients.first_error());
  }
  // The durable point: every log has caught up with what is acknowledged so far.
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> durable, ReadBalances(cluster->client(), accounts));
  ASSERT_OK(cluster->WaitForLogsCaughtUp().status());

  std::vector<std::set<int64_t>> attempted;
  uint64_t acknowledged = 0;
  {
    TransferClients clients(cluster->client(), accounts, {.clients = 4, .transfers_each = 0, .seed = 4});
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (clients.acknowledged() < 100 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
    ASSERT_GE(clients.acknowledged(), 100u);
    cluster->KillAll();  // while the clients are still transferring
    clients.Stop();
    acknowledged = clients.acknowledged();
    attempted = clients.attempted_values();
  }
  std::cerr << "[ info ] killed after " << acknowledged << " acknowledged transfers past the durable point\n";

  const uint64_t epoch = cluster->epoch();
  ASSERT_OK(cluster->Restart());
  ExpectRestarted(*cluster, epoch, /*expect_nothing_adopted=*/false);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> restored, ReadBalances(cluster->client(), accounts));
  // Each account comes back at its durable value or at a value a later transfer wrote to it, never older,
  // never anything else; and the restored log epochs are a consistent cut, so transfers come back whole
  // and the total is conserved.
  for (int i = 0; i < kAccounts; ++i) {
    EXPECT_TRUE(restored[i] == durable[i] || attempted[i].contains(restored[i]))
        << "account " << i << " came back as " << restored[i] << ", durable was " << durable[i];
  }
  EXPECT_EQ(Sum(restored), kAccounts * kInitial);
  // From the restart on the cluster serves and conserves whatever total it came back with.
  TransferClients clients(cluster->client(), accounts, {.clients = 4, .transfers_each = 30, .seed = 5});
  clients.Join();
  ASSERT_OK(clients.first_error());
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> last, ReadBalances(cluster->client(), accounts));
  EXPECT_EQ(Sum(last), Sum(restored));

  // What the restarted cluster did is as durable as anything: caught up, killed, restarted, all there.
  ASSERT_OK(cluster->WaitForLogsCaughtUp().status());
  const uint64_t second_epoch = cluster->epoch();
  cluster->KillAll();
  ASSERT_OK(cluster->Restart());
  ExpectRestarted(*cluster, second_epoch, /*expect_nothing_adopted=*/true);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> again, ReadBalances(cluster->client(), accounts));
  EXPECT_EQ(again, last);
}

// Node 1's first data region (index 0 is its ring region).
constexpr uint32_t kRegion = (1 << 16) | 1;

// A log of node 1 with `objects` 64-byte objects in its first data region, as fathomd would have written it.
void WriteLog(const std::string& dir, int objects, bool flush_to_sst) {
  {
    ASSERT_OK_AND_ASSIGN(auto log, logging::ObjectLog::Open({.dir = dir, .node_id = 1}));
    for (int i = 0; i < objects; ++i) {
      logging::ObjectState state;
      state.address = memory::GlobalAddress{kRegion, static_cast<uint32_t>(64 * i)};
      state.capacity = 64;
      state.incarnation = 1;
      state.flags = 1;
      state.version = 3;
      state.payload = std::string(8, static_cast<char>('a' + i % 26));
      state.txn_epoch = 1;
      state.txn_node = 4;
      state.txn_counter = i;
      log->Append(state);
    }
    ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
  }
  if (flush_to_sst) {
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir, &db).ok());
    ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
    ASSERT_TRUE(db->Close().ok());
    delete db;
  }
}

std::string Stored(const std::string& dir, const std::string& key) {
  rocksdb::DB* db = nullptr;
  EXPECT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), dir, &db).ok());
  std::string value;
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), key, &value).ok());
  delete db;
  return value;
}

void Plant(const std::string& dir, const std::string& key, const std::string& value) {
  rocksdb::DB* db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir, &db).ok());
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, value).ok());
  ASSERT_TRUE(db->Close().ok());
  delete db;
}

std::vector<std::string> SingleNodeFlags(const std::string& dir) {
  return {absl::StrCat("--token=", RestartCluster::kToken), "--memory=16M", "--region_size=16M", "--threads=2",
          "--transports=sm", "--backups=0", "--txn_members=1", "--listen=127.0.0.1:0",
          absl::StrCat("--data_dir=", dir)};
}

// fathomd must exit 1 at startup, saying which node, which directory and what (key or file) is damaged.
void ExpectStartupRefused(const std::string& dir, std::vector<std::string> mentions) {
  ASSERT_OK_AND_ASSIGN(FathomdExit exit, RunFathomdToExit(1, SingleNodeFlags(dir), dir + ".stderr"));
  EXPECT_EQ(exit.exit_code, 1) << exit.stderr_text;
  EXPECT_EQ(exit.stdout_line, "");
  std::cerr << "[ info ] fathomd refused to start:\n" << exit.stderr_text;
  for (const std::string& m : mentions) EXPECT_NE(exit.stderr_text.find(m), std::string::npos) << exit.stderr_text;
}

TEST(FathomdRestartTest, AnIntactLogIsRestoredAndADamagedOneStopsStartup) {
  const std::string key = logging::ObjectKey({kRegion, 128});
  {
    // The control: the same log, undamaged, is restored and served.
    const std::string dir = FreshDir("intact") + "/node1";
    WriteLog(dir, 6, /*flush_to_sst=*/true);
    std::vector<std::string> flags = SingleNodeFlags(dir);
    flags.push_back("--log_fsync");
    ASSERT_OK_AND_ASSIGN(FathomdProcess node, StartFathomd(1, flags));
    ASSERT_OK_AND_ASSIGN(auto client, ConnectControl(node.control_address, RestartCluster::kToken));
    ASSERT_OK_AND_ASSIGN(auto stats, client->Stats());
    EXPECT_EQ(stats.counters().at("restart.primaries"), 6u);
    EXPECT_EQ(stats.counters().at("txn.epoch"), 2u);
    node.process->Signal(SIGKILL);
  }
  {
    const std::string dir = FreshDir("flipped") + "/node1";
    WriteLog(dir, 6, false);
    std::string value = Stored(dir, key);
    value[60] ^= 0x01;  // a payload byte: the value's checksum no longer matches
    Plant(dir, key, value);
    ExpectStartupRefused(dir, {"node 1 cannot restart from its log in " + dir, "object r65537+0x80", "checksum"});
  }
  {
    const std::string dir = FreshDir("cut") + "/node1";
    WriteLog(dir, 6, false);
    Plant(dir, key, Stored(dir, key).substr(0, 40));
    ExpectStartupRefused(dir, {"node 1 cannot restart from its log in " + dir, "object r65537+0x80: truncated"});
  }
  {
    const std::string dir = FreshDir("version") + "/node1";
    WriteLog(dir, 6, false);
    std::string value = Stored(dir, key);
    value[0] = 9;
    Plant(dir, key, value);
    ExpectStartupRefused(dir, {"node 1 cannot restart from its log in " + dir, "object r65537+0x80: record format version 9"});
  }
  {
    // Memory smaller than the log covers: refused, not silently dropped.
    const std::string dir = FreshDir("less_memory") + "/node1";
    WriteLog(dir, 6, false);
    logging::ObjectState beyond = logging::DecodeState(key, Stored(dir, key)).value();
    beyond.address.region = kRegion + 1;
    {
      ASSERT_OK_AND_ASSIGN(auto log, logging::ObjectLog::Open({.dir = dir, .node_id = 1}));
      log->Append(beyond);
      ASSERT_OK(log->WaitForPersisted(absl::Seconds(10)));
    }
    ExpectStartupRefused(dir, {"node 1 cannot restart", "node 1 has no region 65538"});
  }
  {
    // A truncated SST file: RocksDB's own checks refuse it, naming the file.
    const std::string dir = FreshDir("sst") + "/node1";
    WriteLog(dir, 64, /*flush_to_sst=*/true);
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".sst") fs::resize_file(entry.path(), fs::file_size(entry.path()) / 2);
    }
    ExpectStartupRefused(dir, {"node 1 cannot restart from its log in " + dir, ".sst"});
  }
}

// A restart needs every member's log: a member that has none is named, and the restart stops.
TEST(FathomdRestartTest, ARestartIsRefusedWhenAMemberHasNoLog) {
  const std::string dir = FreshDir("member_without_log");
  WriteLog(dir + "/node1", 4, false);
  std::vector<std::string> flags = SingleNodeFlags(dir + "/node2");
  flags.push_back("--txn_members=1,2");  // the later flag wins
  flags.push_back("--backups=1");
  ASSERT_OK_AND_ASSIGN(FathomdProcess fresh, StartFathomd(2, flags));  // an empty directory: starts fresh
  flags = SingleNodeFlags(dir + "/node1");
  flags.push_back("--txn_members=1,2");
  flags.push_back("--backups=1");
  flags.push_back("--peers=2@" + fresh.control_address);
  ASSERT_OK_AND_ASSIGN(FathomdExit exit, RunFathomdToExit(1, flags, dir + "/node1.stderr"));
  std::cerr << "[ info ] fathomd refused to start:\n" << exit.stderr_text;
  EXPECT_EQ(exit.exit_code, 1);
  EXPECT_NE(exit.stderr_text.find("node 2 has no log, but node 1 restarts from its log in " + dir + "/node1"),
            std::string::npos)
      << exit.stderr_text;
}

}  // namespace
}  // namespace fathom::testing
