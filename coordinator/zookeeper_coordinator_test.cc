#include "coordinator/zookeeper_coordinator.h"

#include <zookeeper/zookeeper.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "coordinator/zookeeper_acl.h"
#include "gtest/gtest.h"
#include "tests/zookeeper/zookeeper_server.h"

namespace fathom::coordinator {
namespace {

using fathom::testing::CountProcessesMentioning;
using fathom::testing::ZooKeeperServer;

MemberInfo Member(uint32_t id) {
  MemberInfo m;
  m.set_node_id(id);
  m.set_control_address(absl::StrCat("127.0.0.1:", 7000 + id));
  m.set_fabric(FABRIC_KIND_UCX_TCP);
  m.set_memory_bytes(1 << 30);
  return m;
}

std::vector<uint32_t> Ids(const Configuration& c) {
  std::vector<uint32_t> ids;
  for (const MemberInfo& m : c.members()) ids.push_back(m.node_id());
  return ids;
}

bool Eventually(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(30)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return done();
}

void QuietLog(const char*) {}

constexpr char kToken[] = "zookeeper-coordinator-test-token";

class ZooKeeperCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto zk = ZooKeeperServer::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = std::move(*zk);
  }
  void TearDown() override {
    nodes_.clear();
    const std::string dir = zk_->dir();
    zk_.reset();
    EXPECT_EQ(CountProcessesMentioning(dir), 0) << "a ZooKeeper server outlived its fixture";
  }

  ZooKeeperCoordinatorOptions Options() {
    ZooKeeperCoordinatorOptions options;
    options.connect_string = zk_->connect_string();
    options.cluster = "test";
    options.token = kToken;
    options.session_timeout = absl::Seconds(6);
    options.connect_timeout = absl::Seconds(20);
    return options;
  }
  ZooKeeperCoordinator* AddNode(uint32_t id) {
    auto c = ZooKeeperCoordinator::Create(Options());
    EXPECT_TRUE(c.ok()) << c.status();
    if (!c.ok()) return nullptr;
    absl::Status s = (*c)->Join(Member(id));
    EXPECT_TRUE(s.ok()) << s;
    nodes_.push_back(std::move(*c));
    return nodes_.back().get();
  }
  // The one node that is manager, or nullptr when there is none or more than one.
  ZooKeeperCoordinator* Manager() {
    ZooKeeperCoordinator* found = nullptr;
    for (auto& n : nodes_) {
      if (n->state() == CoordinatorState::kClosed || !n->is_manager()) continue;
      if (found != nullptr) return nullptr;
      found = n.get();
    }
    return found;
  }
  // Every live node sees a configuration with exactly `ids`.
  bool AllSee(const std::vector<uint32_t>& ids) {
    for (auto& n : nodes_) {
      if (n->state() == CoordinatorState::kClosed) continue;
      absl::StatusOr<Configuration> c = n->GetConfiguration();
      if (!c.ok() || Ids(*c) != ids) return false;
    }
    return true;
  }
  // A raw client for poking at the znodes, with the credentials of `token` (none if empty).
  zhandle_t* RawClient(const std::string& token = kToken) {
    zhandle_t* zh = zookeeper_init2(zk_->connect_string().c_str(), nullptr, 6000, nullptr, nullptr, 0, QuietLog);
    Eventually([&] { return zoo_state(zh) == ZOO_CONNECTED_STATE; });
    if (!token.empty()) {  // once connected: the client refuses credentials before
      const std::string auth = ZooKeeperCredentialsFor(token).auth;
      EXPECT_EQ(zoo_add_auth(zh, "digest", auth.data(), static_cast<int>(auth.size()), nullptr, nullptr), ZOK);
    }
    return zh;
  }

  std::unique_ptr<ZooKeeperServer> zk_;
  std::vector<std::unique_ptr<ZooKeeperCoordinator>> nodes_;
};

TEST_F(ZooKeeperCoordinatorTest, ThreeNodesJoinOneManagerListsAll) {
  for (uint32_t id : {1, 2, 3}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}) && Manager() != nullptr; }));
  ZooKeeperCoordinator* cm = Manager();
  Configuration config = *cm->GetConfiguration();
  EXPECT_EQ(config.manager_id(), config.members(0).node_id());  // the first to join wins the election
  EXPECT_TRUE(nodes_[0]->is_manager());
  EXPECT_EQ(config.members(1).control_address(), "127.0.0.1:7002");
  // An observer (not joined) sees the same configuration.
  auto observer = ZooKeeperCoordinator::Create(Options());
  ASSERT_TRUE(observer.ok());
  EXPECT_EQ(Ids(*(*observer)->GetConfiguration()), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_FALSE((*observer)->is_manager());
  // A second coordinator cannot join with a live member's id.
  EXPECT_EQ((*observer)->Join(Member(2)).code(), absl::StatusCode::kAlreadyExists);
}

// A cluster's znodes carry a digest ACL derived from its token: a client without the credentials can
// neither read nor write them, a coordinator with another token is refused at once and says why, and the
// ACL holds a hash, never the token. /fathom stays open, so another cluster under its own token fits.
TEST_F(ZooKeeperCoordinatorTest, TheClusterZnodesAreOpenOnlyToItsToken) {
  ASSERT_NE(AddNode(1), nullptr);
  zhandle_t* stranger = RawClient("");
  char buf[64];
  int len = sizeof buf;
  EXPECT_EQ(zoo_get(stranger, "/fathom/test/config", 0, buf, &len, nullptr), ZNOAUTH);
  EXPECT_EQ(zoo_create(stranger, "/fathom/test/members/9", "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, nullptr, 0), ZNOAUTH);
  EXPECT_EQ(zoo_set(stranger, "/fathom/test/config", "x", 1, -1), ZNOAUTH);
  zookeeper_close(stranger);

  zhandle_t* insider = RawClient();
  std::string config(64 << 10, '\0');
  len = static_cast<int>(config.size());
  EXPECT_EQ(zoo_get(insider, "/fathom/test/config", 0, config.data(), &len, nullptr), ZOK);
  ACL_vector acl{};
  Stat stat{};
  ASSERT_EQ(zoo_get_acl(insider, "/fathom/test", &acl, &stat), ZOK);
  ASSERT_EQ(acl.count, 1);
  EXPECT_STREQ(acl.data[0].id.scheme, "digest");
  EXPECT_EQ(std::string(acl.data[0].id.id), ZooKeeperCredentialsFor(kToken).acl_id);
  EXPECT_EQ(std::string(acl.data[0].id.id).find(kToken), std::string::npos) << "the token itself is in the ACL";
  deallocate_ACL_vector(&acl);
  zookeeper_close(insider);

  ZooKeeperCoordinatorOptions wrong = Options();
  wrong.token = "some-other-cluster-token";
  const absl::Time started = absl::Now();
  auto refused = ZooKeeperCoordinator::Create(wrong);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("token"), absl::string_view::npos) << refused.status();
  EXPECT_LT(absl::Now() - started, wrong.connect_timeout) << "refused only after a timeout";

  ZooKeeperCoordinatorOptions other = Options();
  other.cluster = "other";
  other.token = "some-other-cluster-token";
  auto neighbour = ZooKeeperCoordinator::Create(other);
  EXPECT_TRUE(neighbour.ok()) << neighbour.status();
}

TEST_F(ZooKeeperCoordinatorTest, AClientOnlyMemberIsListedButNeverManages) {
  ASSERT_NE(AddNode(1), nullptr);
  auto client = ZooKeeperCoordinator::Create(Options());
  ASSERT_TRUE(client.ok()) << client.status();
  MemberInfo me = Member(9);
  me.set_client_only(true);
  ASSERT_TRUE((*client)->Join(me).ok());
  nodes_.push_back(std::move(*client));
  ZooKeeperCoordinator* c = nodes_.back().get();
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 9}); }));
  const Configuration config = *c->GetConfiguration();
  EXPECT_EQ(config.manager_id(), 1u);
  EXPECT_TRUE(config.members(1).client_only());
  EXPECT_EQ(DataMemberIds(config), (std::vector<uint32_t>{1}));
  // The client may still change the configuration (its writes are checked against its own election znode).
  ASSERT_TRUE(c->Update([](Configuration& next) {
                   next.add_tables()->set_name("t");
                   return absl::OkStatus();
                 }).ok());
  // Alone, the client does not take over; a data node that comes later does, although it joined later.
  ASSERT_TRUE(nodes_[0]->Leave().ok());
  nodes_[0]->Close();
  absl::SleepFor(absl::Seconds(1));
  EXPECT_FALSE(c->is_manager());
  ASSERT_NE(AddNode(2), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({2, 9}) && Manager() != nullptr; }));
  EXPECT_EQ(Manager(), nodes_.back().get());
  EXPECT_FALSE(c->is_manager());
}

TEST_F(ZooKeeperCoordinatorTest, ManagerCrashElectsANewOneAndTheEpochAdvances) {
  for (uint32_t id : {1, 2, 3}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}) && Manager() != nullptr; }));
  ZooKeeperCoordinator* old_cm = Manager();
  const uint32_t old_id = old_cm->GetConfiguration()->manager_id();
  const uint64_t epoch = old_cm->GetConfiguration()->epoch();
  std::vector<uint32_t> rest;
  for (uint32_t id : {1u, 2u, 3u}) {
    if (id != old_id) rest.push_back(id);
  }
  const absl::Time start = absl::Now();
  old_cm->Close();  // its session ends: its member and election znodes go away
  ASSERT_TRUE(Eventually([&] { return Manager() != nullptr && AllSee(rest); }));
  const absl::Duration failover = absl::Now() - start;
  Configuration config = *Manager()->GetConfiguration();
  EXPECT_GT(config.epoch(), epoch);
  EXPECT_NE(config.manager_id(), old_id);
  EXPECT_EQ(config.manager_id(), rest[0]);
  fprintf(stderr, "CM failover (session closed -> new CM's configuration everywhere): %s\n",
          absl::FormatDuration(failover).c_str());
}

TEST_F(ZooKeeperCoordinatorTest, ALeavingMemberIsRemoved) {
  for (uint32_t id : {1, 2, 3}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}); }));
  const absl::Time start = absl::Now();
  ASSERT_TRUE(nodes_[2]->Leave().ok());
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2}); }));
  fprintf(stderr, "member removal (Leave -> configuration without it everywhere): %s\n",
          absl::FormatDuration(absl::Now() - start).c_str());
  EXPECT_EQ(nodes_[2]->Leave().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(nodes_[0]->ReportSuspect(3, absl::ZeroDuration()).code(), absl::StatusCode::kNotFound);
  // It may join again.
  ASSERT_TRUE(nodes_[2]->Join(Member(3)).ok());
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}); }));
}

// A member whose ZooKeeper session ended, but that the CM's lease agent says still holds a lease, may be
// alive and serving (it lost only ZooKeeper): it stays listed, and its regions stay with it, until its
// lease lapses (issue 58, path 1: the CM removed it and promoted its regions at once). Once the witness
// says it failed, the next reconciliation removes it.
TEST_F(ZooKeeperCoordinatorTest, AVanishedMemberThatHoldsALeaseStaysUntilTheWitnessSaysItFailed) {
  ASSERT_NE(AddNode(1), nullptr);
  ASSERT_NE(AddNode(2), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2}); }));
  ZooKeeperCoordinator* manager = Manager();
  ASSERT_EQ(manager, nodes_[0].get());
  std::atomic<bool> holds_lease{true};
  std::atomic<int> asked{0};
  manager->SetFailureWitness([&](uint32_t node, uint64_t) -> std::optional<ExpiredMember> {
    if (node == 2) ++asked;
    if (node == 2 && holds_lease) return std::nullopt;
    return ExpiredMember::kFailed;
  });
  nodes_[1]->Close();  // its session ends: its registration vanishes
  ASSERT_TRUE(Eventually([&] { return asked > 0; })) << "the CM never looked at node 2's departure";
  // A reconciliation after it (node 3's join) still lists node 2.
  ASSERT_NE(AddNode(3), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}); }));
  holds_lease = false;
  ASSERT_NE(AddNode(4), nullptr);
  EXPECT_TRUE(Eventually([&] { return AllSee({1, 3, 4}); })) << "node 2 was not removed once it failed";
  manager->SetFailureWitness(nullptr);
}

TEST_F(ZooKeeperCoordinatorTest, ConcurrentWritersLoseNoChange) {
  for (uint32_t id : {1, 2, 3}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}); }));
  const uint64_t start_epoch = nodes_[0]->GetConfiguration()->epoch();
  constexpr int kThreads = 6, kEach = 10;
  std::vector<std::thread> threads;
  std::vector<std::vector<uint32_t>> regions(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ZooKeeperCoordinator* c = nodes_[t % nodes_.size()].get();
      for (int i = 0; i < kEach; ++i) {
        if (i % 2 == 0) {
          absl::StatusOr<RegionAllocation> r = c->AllocateRegion(1 << 20, 2);
          ASSERT_TRUE(r.ok()) << r.status();
          EXPECT_NE(r->replicas[0], r->replicas[1]);
          regions[t].push_back(r->region_id);
        } else {
          ASSERT_TRUE(c->Update([&](Configuration& config) {
                         config.add_tables()->set_name(absl::StrCat("t", t, "_", i));
                         return absl::OkStatus();
                       }).ok());
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<uint32_t> ids;
  for (const auto& v : regions) ids.insert(v.begin(), v.end());
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads * kEach / 2));
  const uint64_t final_epoch = start_epoch + kThreads * kEach;
  ASSERT_TRUE(Eventually([&] {
    for (auto& n : nodes_) {
      if (n->GetConfiguration()->epoch() != final_epoch) return false;
    }
    return true;
  }));
  Configuration config = *nodes_[1]->GetConfiguration();
  EXPECT_EQ(config.regions_size(), kThreads * kEach / 2);
  EXPECT_EQ(config.tables_size(), kThreads * kEach / 2);
  EXPECT_EQ(Ids(config), (std::vector<uint32_t>{1, 2, 3}));
}

TEST_F(ZooKeeperCoordinatorTest, ACorruptConfigurationIsReportedAndNeverApplied) {
  for (uint32_t id : {1, 2}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2}); }));
  const Configuration good = *nodes_[0]->GetConfiguration();
  zhandle_t* raw = RawClient();
  const std::string path = "/fathom/test/config";
  std::string truncated = EncodeConfiguration(good);
  truncated.resize(truncated.size() - 3);
  ASSERT_EQ(zoo_set(raw, path.c_str(), truncated.data(), static_cast<int>(truncated.size()), -1), ZOK);
  ASSERT_TRUE(Eventually([&] {
    for (auto& n : nodes_) {
      if (n->config_status().code() != absl::StatusCode::kDataLoss) return false;
    }
    return true;
  }));
  EXPECT_NE(nodes_[1]->config_status().message().find("/fathom/test/config"), absl::string_view::npos)
      << nodes_[1]->config_status();
  EXPECT_EQ(nodes_[0]->GetConfiguration()->epoch(), good.epoch());  // the last good one is kept
  EXPECT_EQ(nodes_[1]->Update([](Configuration&) { return absl::OkStatus(); }).status().code(),
            absl::StatusCode::kDataLoss);
  // A member joining meanwhile is not written over the corrupt configuration.
  auto c3 = ZooKeeperCoordinator::Create(Options());
  ASSERT_TRUE(c3.ok());
  // An operator restores a good configuration: everyone moves on, and the CM adds the waiting member.
  Configuration restored = good;
  restored.set_epoch(good.epoch() + 10);
  const std::string bytes = EncodeConfiguration(restored);
  std::thread joiner([&] {
    EXPECT_TRUE((*c3)->Join(Member(3)).ok());
  });
  absl::SleepFor(absl::Milliseconds(300));
  ASSERT_EQ(zoo_set(raw, path.c_str(), bytes.data(), static_cast<int>(bytes.size()), -1), ZOK);
  joiner.join();
  nodes_.push_back(std::move(*c3));
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}); }));
  for (auto& n : nodes_) EXPECT_TRUE(n->config_status().ok()) << n->config_status();
  EXPECT_GT(nodes_[0]->GetConfiguration()->epoch(), restored.epoch());
  zookeeper_close(raw);
}

TEST_F(ZooKeeperCoordinatorTest, ServerRestartKeepsTheConfigurationAndClientsReconnect) {
  for (uint32_t id : {1, 2, 3}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}); }));
  ASSERT_TRUE(nodes_[0]->AllocateRegion(4096, 3).ok());
  const Configuration before = *nodes_[0]->GetConfiguration();
  // Every node (not only the last) must have seen it before ZooKeeper goes, or one keeps an older epoch.
  ASSERT_TRUE(Eventually([&] {
    for (auto& n : nodes_) {
      if (n->GetConfiguration()->epoch() != before.epoch()) return false;
    }
    return true;
  }));

  zk_->Stop();
  ASSERT_TRUE(Eventually([&] {
    for (auto& n : nodes_) {
      if (n->state() != CoordinatorState::kDisconnected) return false;
    }
    return true;
  }));
  for (auto& n : nodes_) EXPECT_EQ(n->GetConfiguration()->epoch(), before.epoch());
  EXPECT_EQ(nodes_[1]->AllocateRegion(4096, 1).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(nodes_[0]->is_manager());  // no CM acts while disconnected

  ASSERT_TRUE(zk_->Restart().ok());
  ASSERT_TRUE(Eventually([&] {
    for (auto& n : nodes_) {
      if (n->state() != CoordinatorState::kConnected) return false;
    }
    return Manager() != nullptr;
  }));
  for (auto& n : nodes_) {
    EXPECT_EQ(n->GetConfiguration()->SerializeAsString(), before.SerializeAsString());
    EXPECT_EQ(n->session_expirations(), 0);
  }
  absl::StatusOr<RegionAllocation> r = nodes_[1]->AllocateRegion(4096, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->epoch, before.epoch() + 1);
}

TEST_F(ZooKeeperCoordinatorTest, AnExpiredSessionIsReplacedAndTheMemberRegisteredAgain) {
  for (uint32_t id : {1, 2}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2}); }));
  const uint64_t epoch = nodes_[0]->GetConfiguration()->epoch();
  ASSERT_TRUE(nodes_[1]->ExpireSessionForTesting().ok());
  ASSERT_TRUE(Eventually([&] { return nodes_[1]->session_expirations() == 1; }));
  // Node 2 dropped out (its znode went with the session) and came back; its own view follows.
  ASSERT_TRUE(Eventually([&] {
    return AllSee({1, 2}) && nodes_[1]->GetConfiguration()->epoch() >= epoch + 2 &&
           nodes_[1]->state() == CoordinatorState::kConnected;
  }));
  // The manager's session too: node 2 takes over, node 1 comes back as a plain member.
  ASSERT_TRUE(nodes_[0]->ExpireSessionForTesting().ok());
  ASSERT_TRUE(Eventually([&] {
    return nodes_[1]->is_manager() && !nodes_[0]->is_manager() && AllSee({1, 2}) &&
           nodes_[0]->GetConfiguration()->manager_id() == 2 && nodes_[1]->GetConfiguration()->manager_id() == 2;
  }));
  EXPECT_EQ(nodes_[0]->session_expirations(), 1);
}

TEST(ZooKeeperCoordinatorStartTest, UnreachableZooKeeperIsAClearErrorInBoundedTime) {
  // A port nobody listens on: start a server to learn a free port, then stop it.
  auto zk = ZooKeeperServer::Start();
  ASSERT_TRUE(zk.ok()) << zk.status();
  (*zk)->Stop();
  ZooKeeperCoordinatorOptions options;
  options.connect_string = (*zk)->connect_string();
  options.connect_timeout = absl::Seconds(1);
  const absl::Time start = absl::Now();
  auto c = ZooKeeperCoordinator::Create(options);
  ASSERT_FALSE(c.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(c.status().message().find(options.connect_string), absl::string_view::npos) << c.status();
}

}  // namespace
}  // namespace fathom::coordinator

namespace fathom::coordinator {
namespace {

// The CM removes a member whose lease expired: the member's znode goes in the same multi-op, so the
// removal sticks although the member's session is alive (Reconcile does not add it back); only the CM
// may do it; the member comes back by joining again.
TEST_F(ZooKeeperCoordinatorTest, AnExpiredMemberIsRemovedForGoodUntilItJoinsAgain) {
  for (uint32_t id : {1, 2, 3}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}) && Manager() != nullptr; }));
  ZooKeeperCoordinator* cm = Manager();
  ASSERT_EQ(cm, nodes_[0].get());
  const uint64_t epoch = cm->GetConfiguration()->epoch();
  EXPECT_EQ(nodes_[1]->RemoveExpiredMember(3, 0).code(), absl::StatusCode::kFailedPrecondition);  // not the CM
  EXPECT_EQ(cm->RemoveExpiredMember(3, 42).code(), absl::StatusCode::kNotFound);  // another incarnation
  EXPECT_EQ(cm->RemoveExpiredMember(1, 0).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(cm->RemoveExpiredMember(3, 0).ok());
  EXPECT_EQ(cm->GetConfiguration()->epoch(), epoch + 1);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2}); }));
  EXPECT_EQ(cm->RemoveExpiredMember(3, 0).code(), absl::StatusCode::kNotFound);
  // Node 3's session lives on, but its registration is gone: a reconcile (a suspect report makes the CM
  // look at the members again) does not bring it back.
  zhandle_t* raw = RawClient();
  EXPECT_EQ(zoo_exists(raw, "/fathom/test/members/3", 0, nullptr), ZNONODE);
  zookeeper_close(raw);
  EXPECT_EQ(nodes_[2]->state(), CoordinatorState::kConnected);
  EXPECT_EQ(cm->ReportSuspect(2, absl::ZeroDuration()).code(), absl::StatusCode::kOk);
  absl::SleepFor(absl::Seconds(1));
  EXPECT_TRUE(AllSee({1, 2}));
  // Joining again (Leave, then Join) brings it back.
  nodes_[2]->Leave().IgnoreError();
  ASSERT_TRUE(nodes_[2]->Join(Member(3)).ok());
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}); }));
}

}  // namespace
}  // namespace fathom::coordinator

namespace fathom::coordinator {
namespace {

// A member that cannot reach the CM reports it (the lease agent does, when its lease lapsed for want of
// answers): the CM loses its election znode, the next candidate takes over at once (no session expiry),
// and the deposed node stays a member, as a candidate at the end of the line.
TEST_F(ZooKeeperCoordinatorTest, ASuspectedManagerIsDeposedAndTheNextCandidateTakesOver) {
  for (uint32_t id : {1, 2, 3}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}) && Manager() == nodes_[0].get(); }));
  // One vote of three is no majority: node 3 alone may be the one cut off (FaRM's probe).
  ASSERT_TRUE(nodes_[2]->ReportSuspect(1, absl::ZeroDuration()).ok());
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_EQ(Manager(), nodes_[0].get());
  const uint64_t first_cm = Member(1).incarnation();
  absl::StatusOr<std::optional<absl::Duration>> deposed = nodes_[1]->DeposedByVotes(1, first_cm);
  ASSERT_TRUE(deposed.ok()) << deposed.status();
  EXPECT_FALSE(deposed->has_value()) << "one vote of three";
  // A client-only member has no vote.
  auto client = ZooKeeperCoordinator::Create(Options());
  ASSERT_TRUE(client.ok()) << client.status();
  MemberInfo client_member = Member(9);
  client_member.set_client_only(true);
  ASSERT_TRUE((*client)->Join(client_member).ok());
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3, 9}); }));
  const absl::Status refused = (*client)->ReportSuspect(1, absl::ZeroDuration());
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  ASSERT_TRUE((*client)->Leave().ok());
  client->reset();
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2, 3}); }));
  EXPECT_EQ(Manager(), nodes_[0].get());
  // Node 2's vote is the second of three data members: a majority. It states that node 2 confirmed none
  // of node 1's grants for the last 300 ms.
  const absl::Time majority_voted = absl::Now();
  ASSERT_TRUE(nodes_[1]->ReportSuspect(1, absl::Milliseconds(300)).ok());
  ASSERT_TRUE(Eventually([&] {
    absl::StatusOr<Configuration> c = nodes_[2]->GetConfiguration();
    return Manager() == nodes_[1].get() && c.ok() && c->manager_id() == 2;
  }));
  EXPECT_FALSE(nodes_[0]->is_manager());
  EXPECT_EQ(nodes_[0]->state(), CoordinatorState::kConnected);
  // The new CM can tell its predecessor went by a majority's votes (and so its lease is over soon);
  // nobody voted against node 3, nor against another incarnation of node 1.
  // The last grant the old CM's lease may rest on was made when node 2 last confirmed one (its vote minus
  // the 300 ms it states): node 3's vote, 500 ms older and stating no silence, is earlier still, and any
  // majority of voters includes one of the two.
  deposed = nodes_[1]->DeposedByVotes(1, first_cm);
  const absl::Duration since_majority = absl::Now() - majority_voted;
  ASSERT_TRUE(deposed.ok()) << deposed.status();
  ASSERT_TRUE(deposed->has_value());
  EXPECT_GE(**deposed, absl::Milliseconds(300)) << "the stated silence was not counted";
  EXPECT_LE(**deposed, since_majority + absl::Milliseconds(302)) << "counted from an older vote";
  // In ZooKeeper's time: asked again at least 200 ms later, the vote is at least that much older.
  absl::SleepFor(absl::Milliseconds(200));
  absl::StatusOr<std::optional<absl::Duration>> later = nodes_[1]->DeposedByVotes(1, first_cm);
  ASSERT_TRUE(later.ok()) << later.status();
  ASSERT_TRUE(later->has_value());
  EXPECT_GE(**later - **deposed, absl::Milliseconds(198));
  // A vote whose stated silence is not a count of milliseconds within the vote window states none: it
  // bounds the old CM's lease from its own time (rewritten now, so fresh).
  zhandle_t* raw = RawClient();
  const std::string vote = absl::StrCat("/fathom/test/suspicions/1-", first_cm, "/2");
  for (const std::string& lie : std::vector<std::string>{"abc", "-300", "99999999", std::string(100, '7'), ""}) {
    SCOPED_TRACE(absl::StrCat("vote data \"", lie, "\""));
    const absl::Time rewritten = absl::Now();
    ASSERT_EQ(zoo_set(raw, vote.c_str(), lie.data(), static_cast<int>(lie.size()), -1), ZOK);
    later = nodes_[1]->DeposedByVotes(1, first_cm);
    const absl::Duration since_rewritten = absl::Now() - rewritten;
    ASSERT_TRUE(later.ok()) << later.status();
    ASSERT_TRUE(later->has_value());
    EXPECT_LE(**later, since_rewritten + absl::Milliseconds(2)) << "a silence was counted";
  }
  zookeeper_close(raw);
  deposed = nodes_[1]->DeposedByVotes(3, Member(3).incarnation());
  ASSERT_TRUE(deposed.ok()) << deposed.status();
  EXPECT_FALSE(deposed->has_value());
  deposed = nodes_[1]->DeposedByVotes(1, first_cm + 1);
  ASSERT_TRUE(deposed.ok()) << deposed.status();
  EXPECT_FALSE(deposed->has_value());
  // Every node must know node 2 is the CM before it votes against it: a report against a node it takes
  // for a plain member is no vote.
  ASSERT_TRUE(Eventually([&] {
    if (!AllSee({1, 2, 3})) return false;
    for (auto& n : nodes_) {
      absl::StatusOr<Configuration> c = n->GetConfiguration();
      if (!c.ok() || c->manager_id() != 2) return false;
    }
    return true;
  }));
  // Node 1's and node 3's votes against the new CM depose that one in turn: node 3 is next, node 1
  // queued behind it.
  ASSERT_TRUE(nodes_[0]->ReportSuspect(2, absl::ZeroDuration()).ok());
  ASSERT_TRUE(nodes_[2]->ReportSuspect(2, absl::ZeroDuration()).ok());
  ASSERT_TRUE(Eventually([&] { return Manager() == nodes_[2].get(); }));
  // A report against a member that is not the CM only makes the CM look at the members again.
  ASSERT_TRUE(nodes_[0]->ReportSuspect(2, absl::ZeroDuration()).ok());
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_EQ(Manager(), nodes_[2].get());
  EXPECT_TRUE(AllSee({1, 2, 3}));
}

// With manager_hold, the CM keeps its role while ZooKeeper is down (so it keeps granting leases), and
// still holds it when ZooKeeper comes back with the session alive; without, the role ends with the
// connection.
TEST_F(ZooKeeperCoordinatorTest, TheManagerKeepsItsRoleThroughAZooKeeperOutageForTheHold) {
  ZooKeeperCoordinatorOptions options = Options();
  options.session_timeout = absl::Seconds(10);  // the most the fixture's server grants (20 ticks)
  options.manager_hold = absl::Seconds(8);
  auto held = ZooKeeperCoordinator::Create(options);
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_TRUE((*held)->Join(Member(1)).ok());
  nodes_.push_back(std::move(*held));
  ASSERT_NE(AddNode(2), nullptr);  // no hold
  ASSERT_TRUE(Eventually([&] { return AllSee({1, 2}) && nodes_[0]->is_manager(); }));
  zk_->Stop();
  ASSERT_TRUE(Eventually([&] { return nodes_[0]->state() == CoordinatorState::kDisconnected; }));
  EXPECT_TRUE(nodes_[0]->is_manager());
  EXPECT_FALSE(nodes_[1]->is_manager());
  // Still down after a reattach interval: the handles are replaced on the same sessions.
  ASSERT_TRUE(Eventually([&] { return nodes_[0]->reattaches() >= 1 && nodes_[1]->reattaches() >= 1; }));
  EXPECT_TRUE(nodes_[0]->is_manager());
  ASSERT_TRUE(zk_->Restart().ok());
  ASSERT_TRUE(Eventually([&] {
    return nodes_[0]->state() == CoordinatorState::kConnected && nodes_[1]->state() == CoordinatorState::kConnected;
  }));
  // The restart may have outlasted the hold; the first answer on the session gives the role back.
  EXPECT_TRUE(Eventually([&] { return nodes_[0]->is_manager(); }));
  EXPECT_EQ(nodes_[0]->session_expirations(), 0);
  EXPECT_EQ(nodes_[1]->session_expirations(), 0);
  // The same sessions: the registrations and the configuration are as before, and still work.
  const uint64_t epoch = nodes_[0]->GetConfiguration()->epoch();
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_TRUE(AllSee({1, 2}));
  EXPECT_EQ(nodes_[0]->GetConfiguration()->epoch(), epoch);
  ASSERT_TRUE(nodes_[1]->Leave().ok());
  ASSERT_TRUE(Eventually([&] { return AllSee({1}); }));
}

// Issue 58, path 2: the hold counts from the last request ZooKeeper answered, not from when the client
// noticed the silence. A server that goes silent (paused: the connection stays open) is noticed only
// 2/3 of the session timeout later; a hold counted from then outlived the session on the server, and
// an old CM granted leases after its successor had promoted their regions.
TEST_F(ZooKeeperCoordinatorTest, TheManagersHoldCountsFromItsLastAnsweredRequest) {
  ZooKeeperCoordinatorOptions options = Options();
  options.session_timeout = absl::Seconds(6);  // noticed 4 s after the last answer
  options.manager_hold = absl::Seconds(3);
  auto held = ZooKeeperCoordinator::Create(options);
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_TRUE((*held)->Join(Member(1)).ok());
  nodes_.push_back(std::move(*held));
  ASSERT_TRUE(Eventually([&] { return AllSee({1}) && nodes_[0]->is_manager(); }));
  ASSERT_TRUE(zk_->Pause().ok());
  // Every request answered from here on was sent before now.
  const absl::Time silent_since = absl::Now();
  ASSERT_TRUE(Eventually([&] { return absl::Now() >= silent_since + options.manager_hold; }));
  EXPECT_FALSE(nodes_[0]->is_manager()) << "the role outlived the hold, counted from the last answer";
  zk_->Resume();
  // Whether the session survived the pause or a new one was opened, the only node is CM again.
  EXPECT_TRUE(Eventually([&] { return nodes_[0]->is_manager(); }));
}

}  // namespace
}  // namespace fathom::coordinator
