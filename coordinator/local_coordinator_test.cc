#include "coordinator/local_coordinator.h"
#include "coordinator/allocation.h"
#include "coordinator/placement.h"

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/base/mutex.h"

namespace fathom::coordinator {
namespace {

MemberInfo Member(uint32_t id) {
  MemberInfo m;
  m.set_node_id(id);
  m.set_control_address(absl::StrCat("127.0.0.1:", 7000 + id));
  return m;
}

std::vector<uint32_t> Ids(const Configuration& c) {
  std::vector<uint32_t> ids;
  for (const MemberInfo& m : c.members()) ids.push_back(m.node_id());
  return ids;
}

// Records the epochs a subscriber sees.
class Recorder {
 public:
  void operator()(const Configuration& c) {
    MutexLock lock(&mu_);
    epochs_.push_back(c.epoch());
  }
  bool WaitForEpoch(uint64_t epoch) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      {
        MutexLock lock(&mu_);
        if (!epochs_.empty() && epochs_.back() >= epoch) return true;
      }
      absl::SleepFor(absl::Milliseconds(1));
    }
    return false;
  }
  std::vector<uint64_t> epochs() {
    MutexLock lock(&mu_);
    return epochs_;
  }

 private:
  absl::Mutex mu_;
  std::vector<uint64_t> epochs_;
};

TEST(LocalCoordinatorTest, MembersJoinAndLeaveAndTheFirstIsManager) {
  LocalCoordinationService service;
  auto a = service.NewCoordinator();
  auto b = service.NewCoordinator();
  auto c = service.NewCoordinator();
  EXPECT_EQ(a->GetConfiguration().status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(b->Join(Member(2)).ok());
  ASSERT_TRUE(a->Join(Member(1)).ok());
  ASSERT_TRUE(c->Join(Member(3)).ok());
  absl::StatusOr<Configuration> config = c->GetConfiguration();
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(Ids(*config), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(config->epoch(), 3u);
  EXPECT_EQ(config->manager_id(), 2u);  // the earliest to join
  EXPECT_TRUE(b->is_manager());
  EXPECT_FALSE(a->is_manager());

  EXPECT_EQ(a->Join(Member(1)).code(), absl::StatusCode::kFailedPrecondition);
  auto d = service.NewCoordinator();
  EXPECT_EQ(d->Join(Member(1)).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(d->Join(Member(0)).code(), absl::StatusCode::kInvalidArgument);

  b.reset();  // the manager's "session" ends
  config = a->GetConfiguration();
  EXPECT_EQ(Ids(*config), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(config->manager_id(), 1u);
  EXPECT_TRUE(a->is_manager());
  ASSERT_TRUE(c->Leave().ok());
  EXPECT_EQ(Ids(*a->GetConfiguration()), (std::vector<uint32_t>{1}));
  EXPECT_EQ(c->Leave().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(a->ReportSuspect(3, absl::ZeroDuration()).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(a->ReportSuspect(1, absl::ZeroDuration()).ok());  // alive: stays
  EXPECT_EQ(Ids(*a->GetConfiguration()), (std::vector<uint32_t>{1}));
}

TEST(LocalCoordinatorTest, SubscribersSeeEveryEpochInOrderAndMayCallBack) {
  LocalCoordinationService service;
  auto a = service.NewCoordinator();
  ASSERT_TRUE(a->Join(Member(1)).ok());
  Recorder recorder;
  std::atomic<int> nested_ok{0};
  auto sub = a->Subscribe([&](const Configuration& c) {
    recorder(c);
    // Calling the coordinator from a callback does not deadlock.
    if (a->GetConfiguration().ok()) nested_ok++;
  });
  for (uint32_t id = 2; id <= 6; ++id) {
    auto other = service.NewCoordinator();
    ASSERT_TRUE(other->Join(Member(id)).ok());
  }  // each joins and leaves: 10 more epochs
  ASSERT_TRUE(recorder.WaitForEpoch(11));
  std::vector<uint64_t> epochs = recorder.epochs();
  std::vector<uint64_t> expected;
  for (uint64_t e = 1; e <= 11; ++e) expected.push_back(e);
  EXPECT_EQ(epochs, expected);
  EXPECT_EQ(nested_ok.load(), 11);

  // Unsubscribing from inside the callback works too.
  std::unique_ptr<Subscription> self;
  std::atomic<int> calls{0};
  absl::Mutex mu;
  {
    MutexLock lock(&mu);
    self = a->Subscribe([&](const Configuration&) {
      {
        MutexLock lock(&mu);
        self.reset();
      }
      calls++;
    });
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (calls.load() == 0 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  ASSERT_TRUE(a->Update([](Configuration&) { return absl::OkStatus(); }).ok());
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(calls.load(), 1);
  MutexLock lock(&mu);
  EXPECT_EQ(self, nullptr);
}

TEST(LocalCoordinatorTest, ConcurrentCompareAndSetWritersLoseNoChange) {
  LocalCoordinationService service;
  std::vector<std::unique_ptr<LocalCoordinator>> nodes;
  for (uint32_t id = 1; id <= 4; ++id) {
    nodes.push_back(service.NewCoordinator());
    ASSERT_TRUE(nodes.back()->Join(Member(id)).ok());
  }
  constexpr int kThreads = 8, kEach = 25;
  std::vector<std::thread> threads;
  std::vector<std::vector<uint32_t>> regions(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      LocalCoordinator* c = nodes[t % nodes.size()].get();
      for (int i = 0; i < kEach; ++i) {
        if (i % 2 == 0) {
          absl::StatusOr<RegionAllocation> r = c->AllocateRegion(1 << 20, 2);
          ASSERT_TRUE(r.ok()) << r.status();
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
  Configuration config = service.configuration();
  std::set<uint32_t> ids;
  for (const auto& v : regions) ids.insert(v.begin(), v.end());
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads * ((kEach + 1) / 2)));
  EXPECT_EQ(config.regions_size(), static_cast<int>(ids.size()));
  EXPECT_EQ(config.tables_size(), kThreads * (kEach / 2));
  EXPECT_EQ(config.epoch(), 4u + kThreads * kEach);
  EXPECT_EQ(service.commits(), config.epoch());
  // Balanced: two replicas per region over 4 members.
  for (const MemberLoad& l : MemberLoads(config)) EXPECT_EQ(l.replicas, 2 * ids.size() / 4);
}

TEST(LocalCoordinatorTest, UpdatesThatDoNotValidateAreRejected) {
  LocalCoordinationService service;
  auto a = service.NewCoordinator();
  ASSERT_TRUE(a->Join(Member(1)).ok());
  absl::StatusOr<Configuration> r = a->Update([](Configuration& c) {
    c.set_manager_id(77);
    return absl::OkStatus();
  });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a->AllocateRegion(1 << 20, 2).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(service.configuration().epoch(), 1u);
}

}  // namespace
}  // namespace fathom::coordinator

namespace fathom::coordinator {
namespace {

// The CM's removal of an expired member: only the CM, only that incarnation; the member's handle is no
// longer joined (its Leave does nothing), and it comes back by joining again.
TEST(LocalCoordinatorTest, AnExpiredMemberIsRemovedUntilItJoinsAgain) {
  LocalCoordinationService service;
  std::vector<std::unique_ptr<LocalCoordinator>> nodes;
  for (uint32_t id : {1, 2, 3}) {
    nodes.push_back(service.NewCoordinator());
    MemberInfo m = Member(id);
    m.set_incarnation(100 + id);
    ASSERT_TRUE(nodes.back()->Join(m).ok());
  }
  const uint64_t epoch = service.configuration().epoch();
  EXPECT_EQ(nodes[1]->RemoveExpiredMember(3, 103).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(nodes[0]->RemoveExpiredMember(3, 999).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(nodes[0]->RemoveExpiredMember(1, 101).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(nodes[0]->RemoveExpiredMember(3, 103).ok());
  EXPECT_EQ(service.configuration().epoch(), epoch + 1);
  EXPECT_EQ(Ids(service.configuration()), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(nodes[0]->RemoveExpiredMember(3, 103).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(nodes[2]->Leave().code(), absl::StatusCode::kFailedPrecondition);  // no longer joined
  EXPECT_EQ(service.configuration().epoch(), epoch + 1);
  MemberInfo again = Member(3);
  again.set_incarnation(103);
  ASSERT_TRUE(nodes[2]->Join(again).ok());
  EXPECT_EQ(Ids(service.configuration()), (std::vector<uint32_t>{1, 2, 3}));
}


TEST(AllocationTest, RegionIdsStopBelowMembersOwnRegions) {
  Configuration config;
  *config.add_members() = Member(1);
  config.set_next_region_id((1u << 16) - 1);
  RegionAllocation last;
  ASSERT_TRUE(AllocateRegionMutation(4096, 1, &last)(config).ok());
  EXPECT_EQ(last.region_id, (1u << 16) - 1);
  RegionAllocation next;
  const absl::Status refused = AllocateRegionMutation(4096, 1, &next)(config);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_EQ(config.regions_size(), 1);
}

}  // namespace
}  // namespace fathom::coordinator
