// fathomctl against a real ZooKeeper server (the test fixture): a live 2-node fathomd cluster (status as
// text and JSON), a configuration written by hand with regions and unreachable members (regions, status),
// and the errors — ZooKeeper unreachable (bounded, names the connect string), no such cluster, corrupt
// configuration (DataLoss) — each exit 1 without a crash.
#include <sys/wait.h>
#include <zookeeper/zookeeper.h>

#include <cstdlib>
#include <filesystem>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "coordinator/configuration.h"
#include "gtest/gtest.h"
#include "tools/fathomctl/ctl_test_util.h"
#include "tools/fathomctl/json_test_util.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/subprocess.h"
#include "tests/zookeeper/zookeeper_server.h"

namespace fathom {
namespace {

constexpr char kToken[] = "fathomctl-test-token-0123456789";

using Result = ::fathom::fathomctl::testing::CtlResult;
using ::fathom::fathomctl::testing::RunCtl;
using ::fathom::fathomctl::testing::ParseJson;

class FathomctlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto zk = testing::ZooKeeperServer::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = std::move(*zk);
  }
  void TearDown() override {
    if (zh_ != nullptr) zookeeper_close(zh_);
  }

  // Writes `data` at /fathom/<cluster>/config, creating the parents.
  void WriteConfig(const std::string& cluster, const std::string& data) {
    if (zh_ == nullptr) {
      zh_ = zookeeper_init(zk_->connect_string().c_str(), nullptr, 10000, nullptr, nullptr, 0);
      ASSERT_NE(zh_, nullptr);
      const absl::Time deadline = absl::Now() + absl::Seconds(10);
      while (zoo_state(zh_) != ZOO_CONNECTED_STATE && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
      ASSERT_EQ(zoo_state(zh_), ZOO_CONNECTED_STATE);
    }
    for (const std::string& path : {std::string("/fathom"), absl::StrCat("/fathom/", cluster)}) {
      int rc = zoo_create(zh_, path.c_str(), "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, nullptr, 0);
      ASSERT_TRUE(rc == ZOK || rc == ZNODEEXISTS) << path << ": " << zerror(rc);
    }
    const std::string path = absl::StrCat("/fathom/", cluster, "/config");
    ASSERT_EQ(zoo_create(zh_, path.c_str(), data.data(), static_cast<int>(data.size()), &ZOO_OPEN_ACL_UNSAFE, 0,
                         nullptr, 0),
              ZOK);
  }

  std::vector<std::string> Flags(const std::string& cluster) {
    return {absl::StrCat("--zk=", zk_->connect_string()), absl::StrCat("--cluster=", cluster)};
  }

  std::unique_ptr<testing::ZooKeeperServer> zk_;
  zhandle_t* zh_ = nullptr;
};

TEST_F(FathomctlTest, StatusOfALiveCluster) {
  SKIP_JSON_CHECKS_UNDER_TSAN();
  std::vector<std::unique_ptr<testing::Subprocess>> nodes;
  std::vector<std::string> controls;
  // Node 1 logs to a data directory (its log lag is shown), node 2 does not ("off").
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string data_dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/fathomctl_live_node1";
  std::filesystem::remove_all(data_dir);
  for (int id = 1; id <= 2; ++id) {
    std::vector<std::string> node_flags = {
        absl::StrCat("--token=", kToken), "--listen=127.0.0.1:0", "--memory=16M", "--region_size=16M",
        "--threads=2", "--transports=sm", "--cluster=live", absl::StrCat("--zk=", zk_->connect_string()),
        "--zk_session_timeout=2s"};
    if (id == 1) node_flags.push_back("--data_dir=" + data_dir);
    auto node = testing::StartFathomd(id, node_flags);
    ASSERT_TRUE(node.ok()) << node.status();
    controls.push_back(node->control_address);
    nodes.push_back(std::move(node->process));
  }
  std::vector<std::string> flags = Flags("live");
  flags.push_back(absl::StrCat("--token=", kToken));

  // Both members listed, reachable and connected to each other (the second may still be joining).
  std::vector<std::string> json_args = {"status", "--json"};
  json_args.insert(json_args.end(), flags.begin(), flags.end());
  Result json;
  google::protobuf::Struct parsed;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (true) {
    json = RunCtl(json_args);
    ASSERT_EQ(json.exit_code, 0) << json.output;
    parsed = ParseJson(json.output);
    int ready = 0;
    for (const auto& m : parsed.fields().at("members").list_value().values()) {
      const auto& stats = m.struct_value().fields().at("stats").struct_value().fields();
      ready += stats.at("reachable").bool_value() && stats.at("peers").number_value() == 1;
    }
    if (ready == 2 || absl::Now() > deadline) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  const auto& f = parsed.fields();
  EXPECT_EQ(f.at("cluster").string_value(), "live");
  EXPECT_GE(f.at("epoch").number_value(), 2);
  const double manager = f.at("manager").number_value();
  EXPECT_TRUE(manager == 1 || manager == 2) << manager;
  const auto& members = f.at("members").list_value().values();
  ASSERT_EQ(members.size(), 2);
  for (int i = 0; i < 2; ++i) {
    const auto& m = members[i].struct_value().fields();
    EXPECT_EQ(m.at("node_id").number_value(), i + 1);
    EXPECT_EQ(m.at("control_address").string_value(), controls[i]);
    EXPECT_EQ(m.at("fabric").string_value(), "shm");
    EXPECT_EQ(m.at("manager").bool_value(), manager == i + 1);
    const auto& stats = m.at("stats").struct_value().fields();
    EXPECT_TRUE(stats.at("reachable").bool_value()) << json.output;
    EXPECT_TRUE(stats.at("coordinator_connected").bool_value());
    EXPECT_EQ(stats.at("peers").number_value(), 1) << json.output;
    EXPECT_EQ(stats.at("incarnation").string_value(), m.at("incarnation").string_value());
    // Its own 16 MiB region to allocate in, and a copy of the other's (f = 1).
    const auto& memory = stats.at("memory").struct_value().fields();
    EXPECT_EQ(memory.at("region_bytes").number_value(), 16 << 20) << json.output;
    EXPECT_EQ(memory.at("region_copy_bytes").number_value(), 16 << 20) << json.output;
    EXPECT_LE(memory.at("carved_bytes").number_value(), 16 << 20) << json.output;
    if (i == 0) {
      const auto& log = stats.at("log").struct_value().fields();
      EXPECT_EQ(log.at("lag_records").number_value(), 0) << json.output;
      EXPECT_FALSE(log.at("failing").bool_value()) << json.output;
    } else {
      EXPECT_TRUE(stats.at("log").has_null_value()) << json.output;
    }
  }

  std::vector<std::string> args = {"status"};
  args.insert(args.end(), flags.begin(), flags.end());
  Result text = RunCtl(args);
  std::cerr << "[ info ] fathomctl status:\n" << text.output;
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("cluster 'live'"), std::string::npos);
  EXPECT_NE(text.output.find(absl::StrCat("ZooKeeper ", zk_->connect_string())), std::string::npos);
  EXPECT_NE(text.output.find(absl::StrCat(", manager node ", manager, ", 2 members")), std::string::npos);
  EXPECT_NE(text.output.find("NODE  ROLE     CONTROL"), std::string::npos);
  for (const std::string& control : controls) EXPECT_NE(text.output.find(control), std::string::npos) << control;
  EXPECT_NE(text.output.find("  ok     0     1      connected  "), std::string::npos);  // no objects yet: 0 used
  EXPECT_EQ(text.output.find("unreachable"), std::string::npos);
  // Each member's region, placed when it joined: node 1's backed up on 2 and 2's on 1 (f = 1).
  EXPECT_NE(text.output.find("REGION  SIZE   PRIMARY  BACKUPS\n65537   16MiB  1        2\n131073  16MiB  2        1\n"),
            std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("LOG LAG"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("STATS  USED"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("  0 rec/0us\n"), std::string::npos) << text.output;  // node 1
  EXPECT_NE(text.output.find("  off\n"), std::string::npos) << text.output;        // node 2

  // A wrong token: ZooKeeper refuses to show the cluster's znodes (their ACL is the token's digest).
  Result denied = RunCtl({"status", flags[0], flags[1], "--token=not-the-cluster-token-at-all"});
  EXPECT_EQ(denied.exit_code, 1) << denied.output;
  EXPECT_NE(denied.output.find("PERMISSION_DENIED"), std::string::npos) << denied.output;
  EXPECT_NE(denied.output.find("token"), std::string::npos) << denied.output;
  Result no_token = RunCtl({"regions", flags[0], flags[1]});
  EXPECT_EQ(no_token.exit_code, 1) << no_token.output;
  EXPECT_NE(no_token.output.find("--token_file"), std::string::npos) << no_token.output;

  // Every member stopped (SIGSTOP): none answers. The status is printed, and the exit code says that no
  // member answered.
  for (auto& node : nodes) node->Signal(SIGSTOP);
  args = {"status", "--rpc_timeout=1s"};
  args.insert(args.end(), flags.begin(), flags.end());
  Result silent = RunCtl(args);
  for (auto& node : nodes) node->Signal(SIGCONT);
  EXPECT_EQ(silent.exit_code, 1) << silent.output;
  EXPECT_NE(silent.output.find("none of the 2 members answered"), std::string::npos) << silent.output;
  EXPECT_NE(silent.output.find("node 1 unreachable"), std::string::npos) << silent.output;

  for (auto& node : nodes) {
    node->Signal(SIGTERM);
    ASSERT_TRUE(node->Wait(absl::Seconds(30)).ok());
  }
}

TEST_F(FathomctlTest, RegionsAndUnreachableMembersOfAWrittenConfiguration) {
  coordinator::Configuration config;
  config.set_epoch(12);
  config.set_manager_id(1);
  for (uint32_t id : {1, 2, 3}) {
    coordinator::MemberInfo* m = config.add_members();
    m->set_node_id(id);
    m->set_control_address("127.0.0.1:1");  // nothing listens there
    m->set_fabric(coordinator::FABRIC_KIND_UCX_TCP);
    m->set_incarnation(id);
  }
  coordinator::RegionPlacement* r = config.add_regions();
  r->set_region_id(1);
  r->set_size_bytes(64 << 20);
  r->set_primary(1);
  r->add_backups(2);
  r->add_backups(3);
  config.set_next_region_id(2);
  WriteConfig("written", coordinator::EncodeConfiguration(config));

  std::vector<std::string> args = {"regions"};
  for (const std::string& flag : Flags("written")) args.push_back(flag);
  Result text = RunCtl(args);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_EQ(text.output,
            "REGION  SIZE   PRIMARY  BACKUPS\n"
            "1       64MiB  1        2,3\n");
  args.push_back("--json");
  Result json = RunCtl(args);
  EXPECT_EQ(json.exit_code, 0);
  EXPECT_EQ(json.output,
            "{\"epoch\":12,\"regions\":[{\"region_id\":1,\"size_bytes\":67108864,\"primary\":1,\"backups\":[2,3]}],"
            "\"lost_regions\":[]}\n");

  const absl::Time start = absl::Now();
  Result status = RunCtl({"status", Flags("written")[0], Flags("written")[1], absl::StrCat("--token=", kToken),
                          "--rpc_timeout=2s"});
  EXPECT_EQ(status.exit_code, 1) << status.output;  // no member answered
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));
  for (int id = 1; id <= 3; ++id) {
    EXPECT_NE(status.output.find(absl::StrCat("node ", id, " unreachable: ")), std::string::npos) << status.output;
  }
  Result no_stats = RunCtl({"status", Flags("written")[0], Flags("written")[1], "--stats=false"});
  EXPECT_EQ(no_stats.exit_code, 0) << no_stats.output;
  EXPECT_NE(no_stats.output.find("epoch 12, manager node 1, 3 members, 1 region\n"), std::string::npos)
      << no_stats.output;
}

TEST_F(FathomctlTest, UnreachableZooKeeperIsAClearBoundedError) {
  const absl::Time start = absl::Now();
  Result result = RunCtl({"regions", "--zk=127.0.0.1:1", "--zk_timeout=2s"});
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("cannot reach ZooKeeper at 127.0.0.1:1"), std::string::npos) << result.output;
}

TEST_F(FathomctlTest, NoSuchClusterAndCorruptConfiguration) {
  WriteConfig("corrupt", "FCFG this is not a configuration");
  Result missing = RunCtl({"regions", Flags("nope")[0], Flags("nope")[1]});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("no cluster 'nope'"), std::string::npos) << missing.output;
  EXPECT_NE(missing.output.find("clusters there: corrupt"), std::string::npos) << missing.output;

  for (const char* command : {"regions", "status"}) {
    Result corrupt = RunCtl({command, Flags("corrupt")[0], Flags("corrupt")[1], "--stats=false"});
    EXPECT_EQ(corrupt.exit_code, 1) << command;
    EXPECT_NE(corrupt.output.find("DATA_LOSS: corrupt configuration at /fathom/corrupt/config"), std::string::npos)
        << corrupt.output;
  }
}

}  // namespace
}  // namespace fathom
