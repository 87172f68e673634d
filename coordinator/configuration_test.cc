#include "coordinator/configuration.h"

#include "gtest/gtest.h"

namespace fathom::coordinator {
namespace {

MemberInfo Member(uint32_t id) {
  MemberInfo m;
  m.set_node_id(id);
  m.set_control_address("127.0.0.1:" + std::to_string(7000 + id));
  m.set_fabric(FABRIC_KIND_UCX_SHARED_MEMORY);
  m.set_memory_bytes(1 << 30);
  return m;
}

Configuration Valid() {
  Configuration c;
  c.set_epoch(5);
  c.set_manager_id(1);
  for (uint32_t id : {1, 2, 3}) *c.add_members() = Member(id);
  c.set_next_region_id(3);
  RegionPlacement* r = c.add_regions();
  r->set_region_id(1);
  r->set_size_bytes(1 << 20);
  r->set_primary(1);
  r->add_backups(2);
  r = c.add_regions();
  r->set_region_id(2);
  r->set_size_bytes(1 << 20);
  r->set_primary(3);
  TableDescriptor* t = c.add_tables();
  t->set_name("users");
  t->set_kind(TABLE_KIND_HOPSCOTCH);
  t->set_root_region(1);
  return c;
}

void ExpectInvalid(const Configuration& c, const std::string& words) {
  absl::Status s = ValidateConfiguration(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(words), absl::string_view::npos) << s;
}

TEST(ConfigurationTest, AValidConfigurationValidatesAndRoundTrips) {
  Configuration c = Valid();
  ASSERT_TRUE(ValidateConfiguration(c).ok()) << ValidateConfiguration(c);
  absl::StatusOr<Configuration> back = DecodeConfiguration(EncodeConfiguration(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->SerializeAsString(), c.SerializeAsString());
  EXPECT_EQ(Summary(c), "epoch 5, cm 1, members [1 2 3], 2 regions, 1 tables");
}

TEST(ConfigurationTest, ValidationNamesTheProblem) {
  Configuration c = Valid();
  *c.add_members() = Member(2);
  ExpectInvalid(c, "duplicate member 2");

  c = Valid();
  c.mutable_members(0)->set_node_id(0);
  ExpectInvalid(c, "node id 0");

  c = Valid();
  c.mutable_members(1)->clear_control_address();
  ExpectInvalid(c, "no control address");

  c = Valid();
  c.mutable_members(1)->set_lease_address("no-port");
  ExpectInvalid(c, "lease address 'no-port', not ip:port");
  c.mutable_members(1)->set_lease_address(std::string(300, '1') + ":1");
  ExpectInvalid(c, "not ip:port");

  c = Valid();
  c.set_manager_id(9);
  ExpectInvalid(c, "manager 9 is not a member");

  c = Valid();
  c.mutable_regions(0)->set_backups(0, 1);
  ExpectInvalid(c, "region 1 has two replicas on node 1");

  c = Valid();
  c.mutable_regions(1)->add_backups(70000);
  ExpectInvalid(c, "replica on node 70000");

  // A member's own region (node id << 16 | index) holds at most f backups.
  c = Valid();
  c.set_backups_per_region(1);
  RegionPlacement* own = c.add_regions();
  own->set_region_id(3 << 16 | 1);
  own->set_size_bytes(1 << 20);
  own->set_primary(3);
  own->add_backups(1);
  EXPECT_TRUE(ValidateConfiguration(c).ok()) << ValidateConfiguration(c);
  own->add_backups(2);
  ExpectInvalid(c, "has 2 backups; the cluster keeps 1");

  // A member lists only its own regions, each once, of a size a region can have.
  c = Valid();
  MemberRegion* listed = c.mutable_members(0)->add_regions();
  listed->set_region_id(2 << 16 | 1);
  listed->set_size_bytes(1 << 20);
  ExpectInvalid(c, "member 1 lists region 131073, which is not one of its own");
  listed->set_region_id(1 << 16 | 1);
  listed->set_size_bytes(0);
  ExpectInvalid(c, "of 0 bytes");
  listed->set_size_bytes(1 << 20);
  *c.mutable_members(0)->add_regions() = *listed;
  ExpectInvalid(c, "twice");

  c = Valid();
  c.mutable_regions(1)->set_region_id(1);
  ExpectInvalid(c, "duplicate region 1");

  c = Valid();
  c.mutable_regions(1)->set_region_id(3);
  ExpectInvalid(c, "not below next_region_id");

  c = Valid();
  c.mutable_regions(0)->set_size_bytes(0);
  ExpectInvalid(c, "size 0");

  c = Valid();
  c.mutable_tables(0)->set_root_region(9);
  ExpectInvalid(c, "unknown region 9");

  c = Valid();
  *c.add_tables() = c.tables(0);
  ExpectInvalid(c, "duplicate table users");

  // Client-only members hold nothing and manage nothing.
  c = Valid();
  c.mutable_members(0)->set_client_only(true);
  c.set_manager_id(2);
  ExpectInvalid(c, "replica on client-only member 1");
  c = Valid();
  c.mutable_members(c.members_size() - 1)->set_client_only(true);
  c.clear_regions();
  c.clear_tables();
  c.set_manager_id(c.members(c.members_size() - 1).node_id());
  ExpectInvalid(c, "is a client-only member");
}

TEST(ConfigurationTest, DataMembersLeaveOutClients) {
  Configuration c = Valid();
  MemberInfo client = Member(9);
  client.set_client_only(true);
  *c.add_members() = client;
  EXPECT_TRUE(ValidateConfiguration(c).ok());
  EXPECT_EQ(DataMemberIds(c), (std::vector<uint32_t>{1, 2, 3}));
  // And the flag survives the ZooKeeper framing.
  auto back = DecodeConfiguration(EncodeConfiguration(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->members(3).client_only());
}

TEST(ConfigurationTest, CorruptOrTruncatedBytesAreDataLoss) {
  const std::string good = EncodeConfiguration(Valid());
  for (size_t len = 0; len < good.size(); ++len) {
    absl::StatusOr<Configuration> c = DecodeConfiguration(good.substr(0, len));
    ASSERT_EQ(c.status().code(), absl::StatusCode::kDataLoss) << len;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x20;
    ASSERT_EQ(DecodeConfiguration(bad).status().code(), absl::StatusCode::kDataLoss) << i;
  }
  EXPECT_EQ(DecodeConfiguration("garbage that is long enough").status().code(), absl::StatusCode::kDataLoss);
  // A well-framed but invalid configuration is DataLoss too, naming the problem.
  Configuration invalid = Valid();
  invalid.set_manager_id(42);
  absl::Status s = DecodeConfiguration(EncodeConfiguration(invalid)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("manager 42"), absl::string_view::npos) << s;
}

TEST(ConfigurationTest, RemovingAMemberMovesNoReplica) {
  Configuration c = Valid();
  const Configuration before = c;
  EXPECT_TRUE(RemoveMember(&c, 1));  // primary of region 1, the manager
  ASSERT_TRUE(ValidateConfiguration(c).ok()) << ValidateConfiguration(c);
  EXPECT_EQ(c.manager_id(), 0u);
  EXPECT_EQ(FindMember(c, 1), nullptr);
  // Region 1 keeps its primary on the node that left, region 2 its only replica: only recovery moves them.
  EXPECT_TRUE(RemoveMember(&c, 3));
  ASSERT_EQ(c.regions_size(), before.regions_size());
  for (int i = 0; i < c.regions_size(); ++i) EXPECT_EQ(c.regions(i).DebugString(), before.regions(i).DebugString());
  EXPECT_EQ(c.lost_regions_size(), 0);
  ASSERT_TRUE(ValidateConfiguration(c).ok()) << ValidateConfiguration(c);
  EXPECT_FALSE(RemoveMember(&c, 9));
}

}  // namespace
}  // namespace fathom::coordinator
