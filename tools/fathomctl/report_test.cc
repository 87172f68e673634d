// Unit tests of fathomctl's output: units, alignment, JSON escaping, and the status/regions reports for a
// made-up configuration with reachable, unreachable and restarted members (the JSON is parsed back).
#include "tools/fathomctl/report.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "gtest/gtest.h"
#include "tools/fathomctl/json_test_util.h"

namespace fathom::fathomctl {
namespace {

using coordinator::Configuration;

using ::fathom::fathomctl::testing::ParseJson;

Configuration ThreeMembers() {
  Configuration config;
  config.set_epoch(7);
  config.set_manager_id(2);
  for (uint32_t id : {1, 2, 3}) {
    coordinator::MemberInfo* m = config.add_members();
    m->set_node_id(id);
    m->set_control_address(absl::StrCat("10.0.0.", id, ":7000"));
    m->set_fabric(coordinator::FABRIC_KIND_UCX_TCP);
    m->set_memory_bytes(uint64_t{4} << 30);
    m->set_incarnation(uint64_t{18000000000000000000u} + id);
  }
  coordinator::RegionPlacement* r = config.add_regions();
  r->set_region_id(1);
  r->set_size_bytes(64 << 20);
  r->set_primary(2);
  r->add_backups(1);
  r->add_backups(3);
  r = config.add_regions();
  r->set_region_id(2);
  r->set_size_bytes(1536 << 20);
  r->set_primary(3);
  config.add_lost_regions(4);
  config.set_next_region_id(5);
  EXPECT_TRUE(coordinator::ValidateConfiguration(config).ok());
  return config;
}

std::vector<MemberStats> Stats(const Configuration& config) {
  std::vector<MemberStats> stats(3);
  for (int i = 0; i < 3; ++i) {
    stats[i].node_id = i + 1;
    stats[i].stats.set_node_id(i + 1);
    stats[i].stats.set_incarnation(config.members(i).incarnation());
    stats[i].stats.set_uptime_micros(125'000'000);
    (*stats[i].stats.mutable_counters())["node.peers"] = 2;
    (*stats[i].stats.mutable_counters())["coordinator.connected"] = 1;
    (*stats[i].stats.mutable_counters())["coordinator.applied_epoch"] = 7;
  }
  (*stats[0].stats.mutable_counters())["memory.region_bytes"] = 4ull << 30;
  (*stats[0].stats.mutable_counters())["memory.carved_bytes"] = 3 << 20;
  (*stats[0].stats.mutable_counters())["memory.region_copy_bytes"] = 64 << 20;
  stats[1].stats.set_incarnation(99);  // restarted since it registered (and reports no memory gauges)
  stats[2].status = absl::DeadlineExceededError("Control.Stats to 10.0.0.3:7000: Deadline Exceeded");
  return stats;
}

TEST(ReportTest, Units) {
  EXPECT_EQ(HumanBytes(0), "0");
  EXPECT_EQ(HumanBytes(512), "512B");
  EXPECT_EQ(HumanBytes(16 << 20), "16MiB");
  EXPECT_EQ(HumanBytes(1536 << 20), "1.5GiB");
  EXPECT_EQ(HumanBytes(uint64_t{1} << 40), "1TiB");
  EXPECT_EQ(HumanDuration(850'000), "850ms");
  EXPECT_EQ(HumanDuration(12'340'000), "12.3s");
  EXPECT_EQ(HumanDuration(245'000'000), "4m05s");
  EXPECT_EQ(HumanDuration(uint64_t{7380} * 1'000'000), "2h03m");
  EXPECT_EQ(HumanDuration(uint64_t{273600} * 1'000'000), "3d04h");
  EXPECT_EQ(FabricName(coordinator::FABRIC_KIND_UCX_SHARED_MEMORY), "shm");
  EXPECT_EQ(FabricName(coordinator::FABRIC_KIND_UNSPECIFIED), "unspecified");
}

TEST(ReportTest, JsonStringEscapes) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
}

TEST(ReportTest, AlignColumns) {
  EXPECT_EQ(AlignColumns({{"A", "BB", "C"}, {"long", "x", ""}, {"1", "22", "333"}}),
            "A     BB  C\n"
            "long  x\n"
            "1     22  333\n");
}

TEST(ReportTest, StatusText) {
  const Configuration config = ThreeMembers();
  const std::string text = FormatStatusText({"prod", "zk:2181", config, Stats(config)});
  EXPECT_EQ(text,
            "cluster 'prod' (ZooKeeper zk:2181): epoch 7, manager node 2, 3 members, 2 regions\n"
            "\n"
            "NODE  ROLE     CONTROL        FABRIC  MEMORY  INCARNATION           STATS        USED  PEERS  ZK         EPOCH  UPTIME  LOG LAG\n"
            "1     -        10.0.0.1:7000  tcp     4GiB    18000000000000000001  ok           3MiB  2      connected  7      2m05s   off\n"
            "2     manager  10.0.0.2:7000  tcp     4GiB    18000000000000000002  restarted    ?     2      connected  7      2m05s   off\n"
            "3     -        10.0.0.3:7000  tcp     4GiB    18000000000000000003  unreachable  -     -      -          -      -       -\n"
            "node 2 answers with incarnation 99, not the configuration's 18000000000000000002 (restarted)\n"
            "node 3 unreachable: DEADLINE_EXCEEDED: Control.Stats to 10.0.0.3:7000: Deadline Exceeded\n"
            "\n"
            "REGION  SIZE    PRIMARY  BACKUPS\n"
            "1       64MiB   2        1,3\n"
            "2       1.5GiB  3        -\n"
            "lost regions (no replica left): 4\n")
      << text;
}

TEST(ReportTest, StatusTextWithoutStats) {
  Configuration config = ThreeMembers();
  const std::string text = FormatStatusText({"prod", "zk:2181", config, {}});
  EXPECT_NE(text.find("NODE  ROLE     CONTROL        FABRIC  MEMORY  INCARNATION\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("STATS"), std::string::npos) << text;
}

TEST(ReportTest, ClientOnlyMembersShowTheirRole) {
  Configuration config = ThreeMembers();
  coordinator::MemberInfo* client = config.add_members();
  client->set_node_id(65535);
  client->set_control_address("10.0.0.9:7000");
  client->set_client_only(true);
  const std::string text = FormatStatusText({"prod", "zk:2181", config, {}});
  EXPECT_NE(text.find("65535  client"), std::string::npos) << text;
  EXPECT_NE(text.find("3      -"), std::string::npos) << text;
#if !defined(__SANITIZE_THREAD__)
  const auto members = ParseJson(FormatStatusJson({"prod", "zk:2181", config, {}})).fields().at("members").list_value();
  EXPECT_FALSE(members.values(0).struct_value().fields().at("client_only").bool_value());
  EXPECT_TRUE(members.values(3).struct_value().fields().at("client_only").bool_value());
#endif
}

TEST(ReportTest, StatusJsonParses) {
  SKIP_JSON_CHECKS_UNDER_TSAN();
  const Configuration config = ThreeMembers();
  const std::string json = FormatStatusJson({"prod", "zk:2181", config, Stats(config)});
  google::protobuf::Struct parsed = ParseJson(json);
  const auto& f = parsed.fields();
  EXPECT_EQ(f.at("cluster").string_value(), "prod");
  EXPECT_EQ(f.at("epoch").number_value(), 7);
  EXPECT_EQ(f.at("manager").number_value(), 2);
  const auto& members = f.at("members").list_value().values();
  ASSERT_EQ(members.size(), 3);
  const auto& first = members[0].struct_value().fields();
  EXPECT_EQ(first.at("incarnation").string_value(), "18000000000000000001");
  EXPECT_EQ(first.at("control_address").string_value(), "10.0.0.1:7000");
  EXPECT_TRUE(first.at("stats").struct_value().fields().at("reachable").bool_value());
  EXPECT_EQ(first.at("stats").struct_value().fields().at("peers").number_value(), 2);
  EXPECT_EQ(first.at("stats").struct_value().fields().at("counters").struct_value().fields().at("node.peers").number_value(), 2);
  const auto& memory = first.at("stats").struct_value().fields().at("memory").struct_value().fields();
  EXPECT_EQ(memory.at("region_bytes").number_value(), 4.0 * (1 << 30));
  EXPECT_EQ(memory.at("carved_bytes").number_value(), 3 << 20);
  EXPECT_EQ(memory.at("region_copy_bytes").number_value(), 64 << 20);
  EXPECT_TRUE(members[1].struct_value().fields().at("stats").struct_value().fields().at("memory").has_null_value());
  EXPECT_TRUE(members[1].struct_value().fields().at("manager").bool_value());
  const auto& third = members[2].struct_value().fields().at("stats").struct_value().fields();
  EXPECT_FALSE(third.at("reachable").bool_value());
  EXPECT_NE(third.at("error").string_value().find("Deadline Exceeded"), std::string::npos);
  EXPECT_EQ(f.at("regions").list_value().values_size(), 2);
  EXPECT_EQ(f.at("lost_regions").list_value().values(0).number_value(), 4);
}

TEST(ReportTest, Regions) {
  SKIP_JSON_CHECKS_UNDER_TSAN();
  const Configuration config = ThreeMembers();
  EXPECT_EQ(FormatRegionsText(config),
            "REGION  SIZE    PRIMARY  BACKUPS\n"
            "1       64MiB   2        1,3\n"
            "2       1.5GiB  3        -\n"
            "lost regions (no replica left): 4\n");
  EXPECT_EQ(FormatRegionsText(Configuration()), "no regions\n");
  const std::string json = FormatRegionsJson(config);
  EXPECT_EQ(json,
            "{\"epoch\":7,\"regions\":[{\"region_id\":1,\"size_bytes\":67108864,\"primary\":2,\"backups\":[1,3]},"
            "{\"region_id\":2,\"size_bytes\":1610612736,\"primary\":3,\"backups\":[]}],\"lost_regions\":[4]}\n");
  ParseJson(json);
}

}  // namespace
}  // namespace fathom::fathomctl

namespace fathom::fathomctl {
namespace {

// The manager's lease counters become a leases table (text) and a "leases" array (JSON).
TEST(ReportTest, LeasesAsTheManagerSeesThem) {
  const Configuration config = ThreeMembers();  // node 2 is the manager
  std::vector<MemberStats> stats = Stats(config);
  auto& cm = *stats[1].stats.mutable_counters();
  cm["lease.period_ms"] = 2000;
  cm["lease.expiries"] = 1;
  cm["lease.member.1.age_ms"] = 120;
  cm["lease.member.1.expires_in_ms"] = 1880;
  cm["lease.member.1.renewals"] = 42;
  const std::string text = FormatStatusText({"prod", "zk:2181", config, stats});
  EXPECT_NE(text.find("leases (period 2.0s, as the manager sees them; expired so far: 1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("node 1  120ms ago"), std::string::npos) << text;
  EXPECT_EQ(FormatStatusText({"prod", "zk:2181", config, Stats(config)}).find("leases"), std::string::npos);
  const std::string json = FormatStatusJson({"prod", "zk:2181", config, stats});
  EXPECT_NE(json.find("\"leases\":[{\"node_id\":1,\"age_ms\":120,\"expires_in_ms\":1880,\"renewals\":42}]"),
            std::string::npos)
      << json;
}

}  // namespace
}  // namespace fathom::fathomctl

namespace fathom::fathomctl {
namespace {

// The SSD log's lag per node, from its log.* counters: a column of the status table and "log" in JSON.
TEST(ReportTest, LogLagPerNode) {
  SKIP_JSON_CHECKS_UNDER_TSAN();
  const Configuration config = ThreeMembers();
  std::vector<MemberStats> stats = Stats(config);
  auto& first = *stats[0].stats.mutable_counters();
  first["log.lag_records"] = 12;
  first["log.lag_micros"] = 850;
  first["log.enqueued_position"] = 1012;
  first["log.persisted_position"] = 1000;
  first["log.write_errors"] = 0;
  first["log.error"] = 0;
  auto& second = *stats[1].stats.mutable_counters();
  second["log.lag_records"] = 4000;
  second["log.lag_micros"] = 2'500'000;
  second["log.write_errors"] = 7;
  second["log.error"] = 1;
  const std::string text = FormatStatusText({"prod", "zk:2181", config, stats});
  EXPECT_NE(text.find("2m05s   12 rec/850us\n"), std::string::npos) << text;
  EXPECT_NE(text.find("2m05s   4000 rec/2.5s FAILING\n"), std::string::npos) << text;
  EXPECT_NE(text.find("node 2: SSD log writes failing (7 errors so far); its lag grows\n"), std::string::npos) << text;

  google::protobuf::Struct parsed = ParseJson(FormatStatusJson({"prod", "zk:2181", config, stats}));
  const auto& members = parsed.fields().at("members").list_value().values();
  const auto& log = members[0].struct_value().fields().at("stats").struct_value().fields().at("log").struct_value().fields();
  EXPECT_EQ(log.at("lag_records").number_value(), 12);
  EXPECT_EQ(log.at("lag_micros").number_value(), 850);
  EXPECT_EQ(log.at("persisted_position").number_value(), 1000);
  EXPECT_FALSE(log.at("failing").bool_value());
  const auto& failing = members[1].struct_value().fields().at("stats").struct_value().fields().at("log").struct_value().fields();
  EXPECT_TRUE(failing.at("failing").bool_value());
  EXPECT_EQ(failing.at("write_errors").number_value(), 7);
  // No log (fathomd without --data_dir): null.
  const std::string plain = FormatStatusJson({"prod", "zk:2181", config, Stats(config)});
  EXPECT_NE(plain.find("\"log\":null"), std::string::npos) << plain;
}

}  // namespace
}  // namespace fathom::fathomctl
