// The shipped ZooKeeperCoordinator on the simulated ensemble (SimZooKeeperStore), where ZooKeeper can be
// lost by one node only. The coordinators still run their own worker threads on the real clock (the
// executor comes next), so this test waits on conditions in real time; the ensemble is delivered to by
// a thread of the test.
#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "coordinator/configuration.h"
#include "coordinator/zookeeper_coordinator.h"
#include "gtest/gtest.h"
#include "platform/base/clock.h"
#include "tests/sim/sim_zookeeper.h"

namespace fathom::sim {
namespace {

using coordinator::Configuration;
using coordinator::MemberInfo;
using coordinator::ZooKeeperCoordinator;

MemberInfo Member(uint32_t id) {
  MemberInfo m;
  m.set_node_id(id);
  m.set_control_address(absl::StrCat("127.0.0.1:", 7000 + id));
  m.set_fabric(coordinator::FABRIC_KIND_SIM);
  m.set_memory_bytes(1 << 30);
  return m;
}

bool Eventually(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(60)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return done();
}

class ZooKeeperCoordinatorSimTest : public ::testing::Test {
 protected:
  static constexpr absl::Duration kSession = absl::Seconds(2);
  static constexpr absl::Duration kHold = absl::Seconds(1);

  void SetUp() override {
    deliverer_ = std::thread([this] {
      while (!stop_) {
        zk_.Deliver();
        absl::SleepFor(absl::Milliseconds(1));
      }
    });
  }
  void TearDown() override {
    nodes_.clear();
    stop_ = true;
    deliverer_.join();
  }
  ZooKeeperCoordinator* AddNode(uint32_t id, absl::Duration retry = absl::Milliseconds(50)) {
    coordinator::ZooKeeperCoordinatorOptions options;
    options.connect_string = "sim";
    options.cluster = "sim";
    options.store = &zk_;
    options.client = id;
    options.session_timeout = kSession;
    options.manager_hold = kHold;
    options.retry_interval = retry;
    options.reattach_interval = absl::Milliseconds(300);
    auto c = ZooKeeperCoordinator::Create(options);
    EXPECT_TRUE(c.ok()) << c.status();
    if (!c.ok()) return nullptr;
    absl::Status joined = (*c)->Join(Member(id));
    EXPECT_TRUE(joined.ok()) << joined;
    nodes_.push_back(std::move(*c));
    return nodes_.back().get();
  }
  static std::vector<uint32_t> Ids(const Configuration& c) {
    std::vector<uint32_t> ids;
    for (const MemberInfo& m : c.members()) ids.push_back(m.node_id());
    return ids;
  }
  bool Sees(size_t index, const std::vector<uint32_t>& ids) {
    absl::StatusOr<Configuration> c = nodes_[index]->GetConfiguration();
    return c.ok() && Ids(*c) == ids;
  }

  // Session timeouts of 0.2..2 s.
  SimZooKeeperStore zk_{Clock::Real(), SimZooKeeperStore::Options{.tick = absl::Milliseconds(100)}};
  std::atomic<bool> stop_{false};
  std::thread deliverer_;
  std::vector<std::unique_ptr<ZooKeeperCoordinator>> nodes_;
};

TEST_F(ZooKeeperCoordinatorSimTest, ThreeNodesJoinAndTheFirstIsManager) {
  for (uint32_t id : {1, 2, 3}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return Sees(0, {1, 2, 3}) && Sees(1, {1, 2, 3}) && Sees(2, {1, 2, 3}); }));
  EXPECT_TRUE(nodes_[0]->is_manager());
  EXPECT_FALSE(nodes_[1]->is_manager());
  EXPECT_FALSE(nodes_[2]->is_manager());
}

// Issue 58, path 2, in the simulated ensemble: the CM alone loses ZooKeeper. Its role ends within the
// hold of its last answered request, before its session can expire; then a successor takes over and
// removes it; healed, it learns its session expired and joins again.
TEST_F(ZooKeeperCoordinatorSimTest, ACmCutOffZooKeeperAloneGivesUpItsRoleBeforeItsSessionEnds) {
  for (uint32_t id : {1, 2, 3}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return Sees(1, {1, 2, 3}) && nodes_[0]->is_manager(); }));
  const absl::Time cut_at = absl::Now();
  zk_.CutOff(1);
  // Never CM past the hold (counted from a request answered before the cut), whatever the client noticed.
  bool held_too_long = false;
  ASSERT_TRUE(Eventually([&] {
    if (nodes_[0]->is_manager() && absl::Now() > cut_at + kHold) held_too_long = true;
    return nodes_[1]->is_manager() && Sees(1, {2, 3}) && Sees(2, {2, 3});
  })) << "no successor removed the cut-off CM";
  EXPECT_FALSE(held_too_long) << "the cut-off CM kept its role past its hold";
  EXPECT_FALSE(nodes_[0]->is_manager());
  zk_.Reconnect(1);
  EXPECT_TRUE(Eventually([&] { return nodes_[0]->session_expirations() >= 1; }));
  EXPECT_TRUE(Eventually([&] { return Sees(0, {1, 2, 3}) && Sees(1, {1, 2, 3}); })) << "node 1 did not join again";
  EXPECT_TRUE(nodes_[1]->is_manager());
  EXPECT_FALSE(nodes_[0]->is_manager());
}

// ConfirmManager asks ZooKeeper now: a CM deposed while its watch events are held back (as when it was
// paused) learns it at once and steps down; a member is told it is none; a CM cut off cannot know.
TEST_F(ZooKeeperCoordinatorSimTest, ConfirmManagerAnswersFromZooKeeperNotFromTheWatch) {
  // No periodic probe within the test (it would find the znode gone by itself).
  for (uint32_t id : {1, 2, 3}) ASSERT_NE(AddNode(id, absl::Seconds(20)), nullptr);
  ASSERT_TRUE(Eventually([&] { return Sees(2, {1, 2, 3}) && nodes_[0]->is_manager(); }));
  EXPECT_TRUE(nodes_[0]->ConfirmManager().ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(nodes_[1]->ConfirmManager()));

  zk_.HoldEvents(1, true);
  ASSERT_TRUE(nodes_[1]->ReportSuspect(1, absl::ZeroDuration()).ok());
  ASSERT_TRUE(nodes_[2]->ReportSuspect(1, absl::ZeroDuration()).ok());
  ASSERT_TRUE(Eventually([&] { return nodes_[1]->is_manager(); })) << "the majority's votes deposed no one";
  EXPECT_TRUE(nodes_[0]->is_manager()) << "its watch is held back: it still believes";
  const absl::Status confirmed = nodes_[0]->ConfirmManager();
  EXPECT_TRUE(absl::IsFailedPrecondition(confirmed)) << confirmed;
  EXPECT_FALSE(nodes_[0]->is_manager());
  zk_.HoldEvents(1, false);

  ASSERT_TRUE(Eventually([&] { return nodes_[1]->ConfirmManager().ok(); }));
  zk_.CutOff(2);
  EXPECT_TRUE(absl::IsUnavailable(nodes_[1]->ConfirmManager()));
  zk_.Reconnect(2);
}

// A member that loses ZooKeeper for less than its session keeps everything: no new configuration.
TEST_F(ZooKeeperCoordinatorSimTest, AShortCutOfAMemberChangesNothing) {
  for (uint32_t id : {1, 2, 3}) ASSERT_NE(AddNode(id), nullptr);
  ASSERT_TRUE(Eventually([&] { return Sees(2, {1, 2, 3}); }));
  const uint64_t epoch = nodes_[0]->GetConfiguration()->epoch();
  zk_.CutOff(3);
  absl::SleepFor(kSession / 2);  // the fault's length, not a wait for a condition
  zk_.Reconnect(3);
  ASSERT_TRUE(Eventually([&] { return nodes_[2]->state() == coordinator::CoordinatorState::kConnected; }));
  EXPECT_EQ(nodes_[2]->session_expirations(), 0);
  EXPECT_EQ(nodes_[0]->GetConfiguration()->epoch(), epoch);
  EXPECT_TRUE(nodes_[0]->is_manager());
}

}  // namespace
}  // namespace fathom::sim
