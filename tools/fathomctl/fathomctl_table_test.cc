// fathomctl table create|drop|list|resize against a real ZooKeeper server and three fathomd processes on it:
// tables made through a member appear in every listing (text and JSON) and in the configuration;
// duplicates, unknown tables, bad names and options, a missing token and an unreachable cluster each get
// a clear error and the documented exit code. The control service itself refuses bad table requests
// (not only fathomctl), and a node without a catalog (static --peers) refuses table calls.
#include <google/protobuf/struct.pb.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/zk_cluster.h"
#include "tools/fathomctl/ctl_test_util.h"
#include "tools/fathomctl/json_test_util.h"

namespace fathom {
namespace {

constexpr char kToken[] = "fathomctl-table-test-token-0123";
using ::fathom::fathomctl::testing::CtlResult;
using ::fathom::fathomctl::testing::ParseJson;
using ::fathom::fathomctl::testing::RunCtl;

class FathomctlTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = testing::StartZkCluster(
        3, {absl::StrCat("--token=", kToken), "--listen=127.0.0.1:0", "--memory=32M", "--region_size=32M",
            "--threads=1", "--transports=sm", "--cluster=tables", "--zk_session_timeout=4s"});
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    zk_ = cluster_.zk.get();
    // Table creation places buckets on the members the transaction layer knows: wait until every member
    // replicates over all three and is connected to the other two (counters from their Stats; no JSON, so
    // this also runs under TSan).
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    for (const testing::FathomdProcess& node : cluster_.nodes) {
      // Connected too: a member that counts three may not have finished connecting to the third yet.
      auto settled = [&] {
        std::map<std::string, uint64_t> counters = testing::CountersOf(node.control_address, kToken);
        return counters["txn.members"] == 3 && counters["node.peers"] == 2;
      };
      while (!settled()) {
        ASSERT_LT(absl::Now(), deadline) << node.control_address << " never saw three members";
        absl::SleepFor(absl::Milliseconds(100));
      }
    }
  }

  CtlResult Ctl(std::vector<std::string> args, bool with_token = true) {
    args.push_back(absl::StrCat("--zk=", zk_->connect_string()));
    args.push_back("--cluster=tables");
    if (with_token) args.push_back(absl::StrCat("--token=", kToken));
    return RunCtl(args, absl::Seconds(120));
  }

  testing::ZkCluster cluster_;
  testing::ZooKeeperServer* zk_ = nullptr;  // cluster_'s
};

// Under TSan the JSON shapes are not parsed (json_test_util.h says why); everything else is checked.
#if defined(__SANITIZE_THREAD__)
constexpr bool kParseJson = false;
#else
constexpr bool kParseJson = true;
#endif

TEST_F(FathomctlTableTest, CreateListDropThroughTheCluster) {
  CtlResult r = Ctl({"table", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "no tables\n");

  r = Ctl({"table", "create", "users", "--buckets=64"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "created table users: hopscotch, 64 buckets\n");
  r = Ctl({"table", "create", "idx.2", "--kind=cuckoo", "--buckets=30", "--inline_bytes=100", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  if (kParseJson) {
    const auto created = ParseJson(r.output).fields().at("table").struct_value().fields();
    EXPECT_EQ(created.at("kind").string_value(), "cuckoo");
    EXPECT_EQ(created.at("inline_bytes").number_value(), 100);
  }

  // Duplicates are refused, by name, whichever member answers.
  r = Ctl({"table", "create", "users"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("already exists"), std::string::npos) << r.output;

  r = Ctl({"table", "list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  if (kParseJson) {
    const auto tables = ParseJson(r.output).fields().at("tables").list_value();
    ASSERT_EQ(tables.values_size(), 2) << r.output;
    const auto& first = tables.values(0).struct_value().fields();
    const auto& second = tables.values(1).struct_value().fields();
    EXPECT_EQ(first.at("name").string_value(), "idx.2");  // sorted by name
    EXPECT_EQ(first.at("buckets").number_value(), 30);
    EXPECT_EQ(second.at("name").string_value(), "users");
    EXPECT_EQ(second.at("kind").string_value(), "hopscotch");
    EXPECT_EQ(second.at("buckets").number_value(), 64);
    EXPECT_EQ(second.at("max_key_bytes").number_value(), 1024);
  }
  r = Ctl({"table", "list"});
  EXPECT_NE(r.output.find("users  hopscotch  64"), std::string::npos) << r.output;

  // The configuration (what every node opens tables from) holds both.
  r = Ctl({"status", "--stats=false"});
  EXPECT_NE(r.output.find("idx.2  cuckoo"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("users  hopscotch"), std::string::npos) << r.output;

  r = Ctl({"table", "drop", "users"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "dropped table users\n");
  r = Ctl({"table", "drop", "users"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no kv table named \"users\""), std::string::npos) << r.output;
  r = Ctl({"table", "list"});
  EXPECT_EQ(r.output.find("users"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("idx.2"), std::string::npos) << r.output;
  // A dropped name can be used again.
  r = Ctl({"table", "create", "users", "--buckets=16"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// A resize through a member: a new bucket count and epoch, in its answer and in every listing. (Clients
// using the table while it is resized: tests/node/fathomd_resize_test.)
TEST_F(FathomctlTableTest, ResizeThroughTheCluster) {
  CtlResult r = Ctl({"table", "create", "users", "--buckets=16"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Ctl({"table", "resize", "users", "--buckets=40"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "resized table users: 40 buckets, epoch 2\n");
  r = Ctl({"table", "resize", "users", "--json"});  // no count: twice the current
  ASSERT_EQ(r.exit_code, 0) << r.output;
  if (kParseJson) {
    const auto resized = ParseJson(r.output).fields().at("table").struct_value().fields();
    EXPECT_EQ(resized.at("name").string_value(), "users");
    EXPECT_EQ(resized.at("buckets").number_value(), 80);
    EXPECT_EQ(resized.at("epoch").number_value(), 3);
  }
  r = Ctl({"table", "resize", "users", "--buckets=8"});  // shrinking an empty table is fine
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "resized table users: 8 buckets, epoch 4\n");
  r = Ctl({"table", "list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  if (kParseJson) {
    const auto listed = ParseJson(r.output).fields().at("tables").list_value().values(0).struct_value().fields();
    EXPECT_EQ(listed.at("buckets").number_value(), 8);
    EXPECT_EQ(listed.at("epoch").number_value(), 4);
  }
}

TEST_F(FathomctlTableTest, ClearErrors) {
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"table", "create", "bad name"}, 2, "table name"},
      {{"table", "create", ".hidden"}, 2, "must not start with '.'"},
      {{"table", "create", std::string(129, 'x')}, 2, "at most 128"},
      {{"table", "create", "t", "--kind=linear"}, 2, "want hopscotch or cuckoo"},
      {{"table", "create", "t", "--kind=cuckoo", "--buckets=2"}, 2, "buckets"},
      {{"table", "create", "t", "--buckets=1"}, 2, "buckets"},
      {{"table", "create", "t", "--max_key_bytes=70000"}, 2, "max_key_bytes"},
      {{"table", "create"}, 2, "give one NAME"},
      {{"table", "list", "extra"}, 2, "no arguments"},
      {{"table", "rename", "a"}, 2, "create NAME, drop NAME, resize NAME or list"},
      {{"table", "drop", "nosuch"}, 1, "no kv table named \"nosuch\""},
      {{"table", "resize", "nosuch", "--buckets=64"}, 1, "no kv table named \"nosuch\""},
      {{"table", "resize", "t", "--buckets=1"}, 2, "buckets: 1 is not in 2..67108864"},
      {{"table", "resize", "t", "--buckets=67108865"}, 2, "buckets"},
      {{"table", "resize", "bad/name"}, 2, "table name"},
      {{"table", "resize"}, 2, "give one NAME"},
      // kv refuses what only it can judge: a key and value that do not fit one object.
      {{"table", "create", "t", "--max_key_bytes=65535", "--max_value_bytes=1048000"}, 1, "do not fit one object"},
  };
  for (const Case& c : cases) {
    CtlResult r = Ctl(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args[c.args.size() > 2 ? 2 : 1] << ": " << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << r.output;
  }
  CtlResult r = Ctl({"table", "list"}, /*with_token=*/false);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("token"), std::string::npos) << r.output;
  r = RunCtl({"table", "list", "--zk=127.0.0.1:1", "--zk_timeout=1s", "--cluster=tables",
              absl::StrCat("--token=", kToken)});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no cluster reachable"), std::string::npos) << r.output;
  r = RunCtl({"table", "list", absl::StrCat("--zk=", zk_->connect_string()), "--cluster=nosuch",
              absl::StrCat("--token=", kToken)});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("nosuch"), std::string::npos) << r.output;
  r = Ctl({"table", "list"});
  EXPECT_EQ(r.output, "no tables\n") << "a refused create left a table behind";
}

TEST_F(FathomctlTableTest, TheServiceValidatesAndNeedsACatalog) {
  auto client = testing::ConnectControl(cluster_.nodes[0].control_address, kToken);
  ASSERT_TRUE(client.ok()) << client.status();
  control::CreateTableRequest bad;
  bad.set_name("no/slash");
  auto created = (*client)->CreateTable(bad);
  EXPECT_TRUE(absl::IsInvalidArgument(created.status())) << created.status();
  bad.set_name("ok");
  bad.set_kind(static_cast<control::TableIndexKind>(9));
  EXPECT_TRUE(absl::IsInvalidArgument((*client)->CreateTable(bad).status()));
  control::DropTableRequest drop;
  drop.set_name("");
  EXPECT_TRUE(absl::IsInvalidArgument((*client)->DropTable(drop).status()));
  control::ResizeTableRequest resize;
  resize.set_name("ok");
  resize.set_buckets(1);
  EXPECT_TRUE(absl::IsInvalidArgument((*client)->ResizeTable(resize).status()));
  resize.set_buckets(0);
  EXPECT_TRUE(absl::IsNotFound((*client)->ResizeTable(resize).status()));
  // What only kv can judge: a cuckoo table needs 3 buckets.
  control::CreateTableRequest cuckoo;
  cuckoo.set_name("c");
  cuckoo.set_kind(control::TABLE_INDEX_CUCKOO);
  cuckoo.set_buckets(8);
  ASSERT_TRUE((*client)->CreateTable(cuckoo).ok());
  resize.set_name("c");
  resize.set_buckets(2);
  auto refused = (*client)->ResizeTable(resize);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();

  // A static node (no --zk) has no catalog to keep names in.
  auto lone = testing::StartFathomd(9, {absl::StrCat("--token=", kToken), "--listen=127.0.0.1:0", "--memory=16M",
                                        "--region_size=16M", "--threads=1", "--transports=sm"});
  ASSERT_TRUE(lone.ok()) << lone.status();
  auto lone_client = testing::ConnectControl(lone->control_address, kToken);
  ASSERT_TRUE(lone_client.ok());
  auto listed = (*lone_client)->ListTables();
  EXPECT_TRUE(absl::IsFailedPrecondition(listed.status())) << listed.status();
  EXPECT_NE(listed.status().message().find("--zk"), absl::string_view::npos) << listed.status();
}

}  // namespace
}  // namespace fathom
