// The ZooKeeperStore contract (coordinator/zookeeper_store.h), checked against both implementations: the C
// client on a real ZooKeeper server (tests/zookeeper's fixture) and the simulation's SimZooKeeperStore.
// Then the simulation's faults, which the real ensemble cannot be told to do.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "coordinator/c_zookeeper_store.h"
#include "coordinator/zookeeper_store.h"
#include "gtest/gtest.h"
#include "platform/base/clock.h"
#include "platform/base/mutex.h"
#include "tests/sim/sim_zookeeper.h"
#include "tests/zookeeper/zookeeper_server.h"

namespace fathom::sim {
namespace {

using coordinator::ZooKeeperStore;
using Event = ZooKeeperStore::Event;
using Kind = Event::Kind;
using Mode = ZooKeeperStore::CreateMode;

// What one session heard, in order.
class Events {
 public:
  std::function<void(const Event&)> Callback() {
    return [this](const Event& e) {
      MutexLock lock(&mu_);
      events_.push_back(e);
    };
  }
  int Count(Kind kind, const std::string& path = "") const {
    MutexLock lock(&mu_);
    int n = 0;
    for (const Event& e : events_) n += e.kind == kind && e.path == path;
    return n;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<Event> events_;
};

// One implementation, and how time passes for it.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual ZooKeeperStore* store() = 0;
  virtual ZooKeeperStore::SessionOptions Options(uint32_t client) = 0;
  // Lets time pass a little (the simulation: its clock, and Deliver).
  virtual void Step() = 0;
  // Ends `session` on the ensemble's side, as a long silence would.
  virtual void Expire(ZooKeeperStore::Session& session) = 0;
  virtual bool Simulated() const = 0;

  bool Eventually(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(30)) {
    const absl::Time deadline = absl::Now() + timeout;
    for (int steps = 0; steps < 100000 && absl::Now() < deadline; ++steps) {
      if (done()) return true;
      Step();
    }
    return done();
  }
};

class RealBackend final : public Backend {
 public:
  RealBackend() {
    auto zk = testing::ZooKeeperServer::Start();
    EXPECT_TRUE(zk.ok()) << zk.status();
    if (zk.ok()) zk_ = std::move(*zk);
  }
  ZooKeeperStore* store() override { return &store_; }
  ZooKeeperStore::SessionOptions Options(uint32_t client) override {
    ZooKeeperStore::SessionOptions o;
    o.connect_string = zk_ != nullptr ? zk_->connect_string() : "127.0.0.1:1";
    o.client = client;
    o.timeout = absl::Seconds(6);
    o.connect_timeout = absl::Seconds(20);
    return o;
  }
  void Step() override { absl::SleepFor(absl::Milliseconds(5)); }
  void Expire(ZooKeeperStore::Session& session) override {
    // Another handle takes the session over and closes it: the server ends it for the first. (The first
    // may reconnect and take the session back before the close arrives: callers try again.)
    ZooKeeperStore::SessionOptions o = Options(0);
    o.resume = session.resume_token();
    auto other = store_.Open(o);
    EXPECT_TRUE(other.ok()) << other.status();
  }
  bool Simulated() const override { return false; }

 private:
  std::unique_ptr<testing::ZooKeeperServer> zk_;
  coordinator::CZooKeeperStore store_;
};

class SimBackend final : public Backend {
 public:
  ZooKeeperStore* store() override { return &store_; }
  ZooKeeperStore::SessionOptions Options(uint32_t client) override {
    ZooKeeperStore::SessionOptions o;
    o.client = client;
    o.timeout = absl::Seconds(6);
    return o;
  }
  void Step() override {
    clock_.Advance(absl::Milliseconds(5));
    store_.Deliver();
  }
  void Expire(ZooKeeperStore::Session& session) override { store_.Expire(session.id()); }
  bool Simulated() const override { return true; }
  SimulatedClock& clock() { return clock_; }
  SimZooKeeperStore& sim() { return store_; }

 private:
  SimulatedClock clock_{absl::FromUnixSeconds(1'800'000'000)};
  SimZooKeeperStore store_{&clock_};
};

class ZooKeeperStoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      backend_ = std::make_unique<SimBackend>();
    } else {
      backend_ = std::make_unique<RealBackend>();
    }
  }
  std::unique_ptr<ZooKeeperStore::Session> Open(uint32_t client, Events* events = nullptr,
                                                const std::string& token = "") {
    ZooKeeperStore::SessionOptions o = backend_->Options(client);
    o.token = token;
    if (events != nullptr) o.on_event = events->Callback();
    auto session = backend_->store()->Open(o);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? std::move(*session) : nullptr;
  }
  SimBackend& sim() { return static_cast<SimBackend&>(*backend_); }

  std::unique_ptr<Backend> backend_;
};

TEST_P(ZooKeeperStoreTest, CreateGetSetDeleteCheckVersions) {
  auto s = Open(1);
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(*s->Create("/t", "a"), "/t");
  EXPECT_TRUE(absl::IsAlreadyExists(s->Create("/t", "b").status()));
  EXPECT_TRUE(absl::IsNotFound(s->Create("/missing/child", "x").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(s->Create("bad", "x").status()));
  absl::StatusOr<ZooKeeperStore::Data> got = s->Get("/t");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->bytes, "a");
  EXPECT_EQ(got->stat.version, 0);
  EXPECT_EQ(got->stat.ephemeral_owner, 0);
  EXPECT_GT(got->stat.mtime_ms, 0);
  ASSERT_EQ(s->Set("/t", "b", 0)->version, 1);
  EXPECT_TRUE(absl::IsAborted(s->Set("/t", "c", 0).status()));
  EXPECT_EQ(s->Get("/t")->bytes, "b");
  EXPECT_TRUE(absl::IsAborted(s->Delete("/t", 0)));
  ASSERT_TRUE(s->Create("/t/child", "").ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(s->Delete("/t", 1)));  // not empty
  ASSERT_TRUE(s->Delete("/t/child").ok());
  ASSERT_TRUE(s->Delete("/t", 1).ok());
  EXPECT_TRUE(absl::IsNotFound(s->Get("/t").status()));
  EXPECT_TRUE(absl::IsNotFound(s->Exists("/t").status()));
  EXPECT_TRUE(absl::IsNotFound(s->Delete("/t")));
}

TEST_P(ZooKeeperStoreTest, SequentialNamesCountPerParentAndChildrenAreSorted) {
  auto s = Open(1);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Create("/s", "").ok());
  ASSERT_EQ(*s->Create("/s/n_", "", Mode::kPersistentSequential), "/s/n_0000000000");
  ASSERT_TRUE(s->Create("/s/b", "").ok());
  ASSERT_TRUE(s->Create("/s/a", "").ok());
  // ZooKeeper's counter is the parent's child version: every create under it counts.
  absl::StatusOr<std::string> third = s->Create("/s/n_", "", Mode::kPersistentSequential);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(*third, "/s/n_0000000003");
  EXPECT_EQ(*s->Children("/s"), (std::vector<std::string>{"a", "b", "n_0000000000", "n_0000000003"}));
  EXPECT_EQ(s->Exists("/s")->num_children, 4);
}

TEST_P(ZooKeeperStoreTest, EphemeralsBelongToTheirSessionAndGoWithIt) {
  auto a = Open(1);
  auto b = Open(2);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->Create("/e", "", Mode::kEphemeral).ok());
  EXPECT_EQ(b->Exists("/e")->ephemeral_owner, a->id());
  EXPECT_TRUE(absl::IsFailedPrecondition(a->Create("/e/child", "").status()));
  a.reset();  // closed
  EXPECT_TRUE(backend_->Eventually([&] { return absl::IsNotFound(b->Exists("/e").status()); }));
}

TEST_P(ZooKeeperStoreTest, AWatchFiresOnceForItsSession) {
  Events heard;
  auto a = Open(1);
  auto b = Open(2, &heard);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->Create("/w", "0").ok());
  ASSERT_TRUE(b->Get("/w", /*watch=*/true).ok());
  ASSERT_TRUE(b->Exists("/later", /*watch=*/true).status().code() == absl::StatusCode::kNotFound);
  ASSERT_TRUE(b->Children("/w", /*watch=*/true).ok());
  ASSERT_TRUE(a->Set("/w", "1").ok());
  ASSERT_TRUE(a->Set("/w", "2").ok());
  ASSERT_TRUE(a->Create("/later", "").ok());
  ASSERT_TRUE(a->Create("/w/c", "").ok());
  EXPECT_TRUE(backend_->Eventually([&] {
    return heard.Count(Kind::kDataChanged, "/w") >= 1 && heard.Count(Kind::kCreated, "/later") >= 1 &&
           heard.Count(Kind::kChildrenChanged, "/w") >= 1;
  }));
  ASSERT_TRUE(b->Exists("/later", /*watch=*/true).ok());
  ASSERT_TRUE(a->Delete("/later").ok());
  EXPECT_TRUE(backend_->Eventually([&] { return heard.Count(Kind::kDeleted, "/later") >= 1; }));
  // Once each: the second Set and the second child found no watch left.
  EXPECT_EQ(heard.Count(Kind::kDataChanged, "/w"), 1);
  EXPECT_EQ(heard.Count(Kind::kChildrenChanged, "/w"), 1);
}

TEST_P(ZooKeeperStoreTest, AMultiIsAllOrNothing) {
  auto s = Open(1);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Create("/m", "0").ok());
  std::vector<absl::Status> results;
  ASSERT_TRUE(s->Multi({ZooKeeperStore::Op::Check("/m", 0), ZooKeeperStore::Op::Set("/m", "1", 0),
                        ZooKeeperStore::Op::Create("/m2", "")},
                       &results)
                  .ok());
  EXPECT_EQ(s->Get("/m")->bytes, "1");
  EXPECT_TRUE(s->Exists("/m2").ok());
  absl::Status failed = s->Multi(
      {ZooKeeperStore::Op::Create("/m3", ""), ZooKeeperStore::Op::Set("/m", "2", 0), ZooKeeperStore::Op::Delete("/m2", -1)},
      &results);
  EXPECT_TRUE(absl::IsAborted(failed)) << failed;  // the version check
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok()) << results[0];  // rolled back
  EXPECT_TRUE(absl::IsAborted(results[1])) << results[1];
  EXPECT_TRUE(absl::IsAborted(results[2])) << results[2];  // not tried
  EXPECT_TRUE(absl::IsNotFound(s->Exists("/m3").status())) << "a failed multi created something";
  EXPECT_TRUE(s->Exists("/m2").ok()) << "a failed multi deleted something";
  EXPECT_EQ(s->Get("/m")->bytes, "1");
}

TEST_P(ZooKeeperStoreTest, AnExpiredSessionHearsItAndLosesItsEphemerals) {
  Events heard;
  auto a = Open(1, &heard);
  auto b = Open(2);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->Create("/x", "", Mode::kEphemeral).ok());
  ASSERT_TRUE(a->Get("/x", /*watch=*/true).ok());  // an outstanding watch hears no session event of its own
  bool expired = false;
  for (int attempt = 0; attempt < 5 && !expired; ++attempt) {
    backend_->Expire(*a);
    expired = backend_->Eventually([&] { return heard.Count(Kind::kExpired) == 1; }, absl::Seconds(10));
  }
  EXPECT_TRUE(expired);
  EXPECT_TRUE(absl::IsNotFound(b->Exists("/x").status()));
  EXPECT_EQ(heard.Count(Kind::kExpired), 1);
  EXPECT_EQ(heard.Count(Kind::kDeleted, "/x"), 0) << "an expired session heard of its own ephemeral's end";
  EXPECT_TRUE(absl::IsUnavailable(a->Create("/y", "").status()));
  ZooKeeperStore::SessionOptions again = backend_->Options(1);
  again.resume = a->resume_token();
  EXPECT_TRUE(absl::IsNotFound(backend_->store()->Open(again).status())) << "resumed a session that ended";
}

TEST_P(ZooKeeperStoreTest, TheTokenGuardsWhatItCreates) {
  auto owner = Open(1, nullptr, "cluster-token");
  auto stranger = Open(2);
  ASSERT_NE(owner, nullptr);
  ASSERT_NE(stranger, nullptr);
  ASSERT_TRUE(owner->Create("/open", "", Mode::kPersistent, ZooKeeperStore::Access::kOpen).ok());
  ASSERT_TRUE(owner->Create("/open/guarded", "secret").ok());
  EXPECT_EQ(owner->Get("/open/guarded")->bytes, "secret");
  EXPECT_TRUE(absl::IsPermissionDenied(stranger->Get("/open/guarded").status()));
  EXPECT_TRUE(absl::IsPermissionDenied(stranger->Set("/open/guarded", "x").status()));
  EXPECT_TRUE(stranger->Children("/open").ok());
}

INSTANTIATE_TEST_SUITE_P(Implementations, ZooKeeperStoreTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Sim" : "CClient"; });

// The simulation's faults.
class SimZooKeeperFaultsTest : public ::testing::Test {
 protected:
  std::unique_ptr<ZooKeeperStore::Session> Open(uint32_t client, Events* events) {
    ZooKeeperStore::SessionOptions o;
    o.client = client;
    o.timeout = absl::Seconds(6);
    o.on_event = events->Callback();
    auto session = zk_.Open(o);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? std::move(*session) : nullptr;
  }
  void RunFor(absl::Duration d) {
    const absl::Time until = clock_.Now() + d;
    while (clock_.Now() < until) {
      clock_.Advance(absl::Milliseconds(10));
      zk_.Deliver();
    }
  }

  SimulatedClock clock_;
  SimZooKeeperStore zk_{&clock_};
};

// A client cut off notices 2/3 of its timeout after its last contact, its session ends a full timeout
// after it, and it hears kExpired only once it reaches the ensemble again; everyone else goes on.
TEST_F(SimZooKeeperFaultsTest, AClientCutOffIsNoticedLateAndExpiresAfterItsTimeout) {
  Events cut, other;
  auto a = Open(1, &cut);
  auto b = Open(2, &other);
  ASSERT_TRUE(a->Create("/e", "", Mode::kEphemeral).ok());
  RunFor(absl::Seconds(1));
  const absl::Time silent_since = clock_.Now();
  zk_.CutOff(1);
  EXPECT_TRUE(absl::IsUnavailable(a->Get("/e").status()));
  EXPECT_TRUE(absl::IsUnavailable(zk_.Open(ZooKeeperStore::SessionOptions{.client = 1}).status()));
  RunFor(absl::Seconds(3));
  EXPECT_EQ(cut.Count(Kind::kDisconnected), 0) << "noticed before 2/3 of the timeout";
  RunFor(absl::Seconds(1) + absl::Milliseconds(100));
  EXPECT_EQ(cut.Count(Kind::kDisconnected), 1);
  EXPECT_TRUE(b->Exists("/e").ok()) << "expired before its timeout";
  RunFor(silent_since + absl::Seconds(6) + absl::Milliseconds(20) - clock_.Now());
  EXPECT_TRUE(absl::IsNotFound(b->Exists("/e").status())) << "not expired after its timeout";
  EXPECT_EQ(cut.Count(Kind::kExpired), 0) << "heard without reaching the ensemble";
  zk_.Reconnect(1);
  RunFor(absl::Milliseconds(20));
  EXPECT_EQ(cut.Count(Kind::kExpired), 1);
  EXPECT_EQ(other.Count(Kind::kDisconnected), 0);
}

// A cut that heals within the timeout costs nothing but the notice; the session and its ephemerals live.
TEST_F(SimZooKeeperFaultsTest, AShortCutKeepsTheSession) {
  Events heard;
  auto a = Open(1, &heard);
  ASSERT_TRUE(a->Create("/e", "", Mode::kEphemeral).ok());
  zk_.CutOff(1);
  RunFor(absl::Seconds(5));
  zk_.Reconnect(1);
  RunFor(absl::Milliseconds(20));
  EXPECT_EQ(heard.Count(Kind::kDisconnected), 1);
  EXPECT_EQ(heard.Count(Kind::kConnected), 2);  // the first connection, and after the cut
  EXPECT_TRUE(a->Exists("/e").ok());
  RunFor(absl::Seconds(20));  // connected again: it pings
  EXPECT_EQ(heard.Count(Kind::kExpired), 0);
}

// While the ensemble is down no session expires, and each gets a full timeout once it is back.
TEST_F(SimZooKeeperFaultsTest, NoSessionExpiresWhileTheEnsembleIsDown) {
  Events heard;
  auto a = Open(1, &heard);
  ASSERT_TRUE(a->Create("/e", "", Mode::kEphemeral).ok());
  zk_.GoDown();
  RunFor(absl::Milliseconds(20));
  EXPECT_EQ(heard.Count(Kind::kDisconnected), 1);  // its socket closed: noticed at once
  EXPECT_TRUE(absl::IsUnavailable(a->Exists("/e").status()));
  RunFor(absl::Seconds(30));
  zk_.ComeUp();
  RunFor(absl::Milliseconds(20));
  EXPECT_EQ(heard.Count(Kind::kExpired), 0);
  EXPECT_TRUE(a->Exists("/e").ok());
}

// Held events arrive late, in order, once released.
TEST_F(SimZooKeeperFaultsTest, HeldEventsArriveLateInOrder) {
  Events heard;
  auto a = Open(1, &heard);
  ASSERT_TRUE(a->Create("/w", "").ok());
  ASSERT_TRUE(a->Get("/w", /*watch=*/true).ok());
  zk_.HoldEvents(true);
  ASSERT_TRUE(a->Set("/w", "1").ok());
  RunFor(absl::Seconds(1));
  EXPECT_EQ(heard.Count(Kind::kDataChanged, "/w"), 0);
  zk_.HoldEvents(false);
  RunFor(absl::Milliseconds(20));
  EXPECT_EQ(heard.Count(Kind::kDataChanged, "/w"), 1);
}

}  // namespace
}  // namespace fathom::sim
