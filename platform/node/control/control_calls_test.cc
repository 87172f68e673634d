// Stats and Shutdown reach the handler; deadlines are enforced on the caller's side; calls from several
// threads at once; a stopped server is unavailable.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/node/control/control_client.h"
#include "platform/node/control/control_server.h"
#include "platform/node/control/testing/control_test_env.h"
#include "platform/node/control/testing/fake_control_handler.h"

namespace fathom::control {
namespace {

using testing::FakeControlHandler;
using testing::SampleNodeInfo;
using testing::TestClientOptions;
using testing::TestServerOptions;

class ControlCallsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(TestServerOptions(), &handler_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    client_ = MakeClient(absl::Seconds(10));
  }

  std::unique_ptr<ControlClient> MakeClient(absl::Duration call_timeout) {
    ControlClientOptions options = TestClientOptions(server_->port());
    options.call_timeout = call_timeout;
    absl::StatusOr<std::unique_ptr<ControlClient>> client = ControlClient::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  FakeControlHandler handler_{SampleNodeInfo(2, 1)};
  std::unique_ptr<ControlServer> server_;
  std::unique_ptr<ControlClient> client_;
};

TEST_F(ControlCallsTest, StatsReachTheHandlerWithTheServersCounters) {
  absl::StatusOr<StatsResponse> stats = client_->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(handler_.stats_calls(), 1);
  EXPECT_EQ(stats->node_id(), 2u);
  EXPECT_EQ(stats->incarnation(), SampleNodeInfo(2, 1).incarnation());
  EXPECT_EQ(stats->uptime_micros(), 1234u);
  EXPECT_EQ(stats->counters().at("msg.messages_sent"), 7u);
  // The handler's bogus "control.calls_handled" is overwritten by the server's own count.
  EXPECT_EQ(stats->counters().at("control.calls_handled"), 1u);
  EXPECT_EQ(stats->counters().at("control.calls_rejected_token"), 0u);
  EXPECT_EQ(stats->counters().at("control.calls_rejected_invalid"), 0u);
}

TEST_F(ControlCallsTest, ShutdownReachesTheHandlerWithItsReason) {
  absl::Status status = client_->Shutdown("rolling restart");
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(handler_.shutdown_calls(), 1);
  EXPECT_EQ(handler_.last_shutdown_reason(), "rolling restart");
}

TEST_F(ControlCallsTest, OversizeShutdownReasonIsInvalid) {
  absl::Status status = client_->Shutdown(std::string(2000, 'r'));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(handler_.shutdown_calls(), 0);
  EXPECT_EQ(server_->counters().rejected_invalid, 1u);
}

TEST_F(ControlCallsTest, HandlerSlowerThanTheDeadlineIsDeadlineExceeded) {
  std::unique_ptr<ControlClient> hasty = MakeClient(absl::Milliseconds(300));
  ASSERT_NE(hasty, nullptr);
  handler_.HoldJoins();
  const absl::Time start = absl::Now();
  absl::StatusOr<NodeInfo> reply = hasty->Join(SampleNodeInfo(1, 2));
  const absl::Duration waited = absl::Now() - start;
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded) << reply.status();
  EXPECT_GE(waited, absl::Milliseconds(250));
  EXPECT_LT(waited, absl::Seconds(8)) << "the caller must not wait for the handler";
  handler_.Release();  // so Stop does not wait for the held handler
  server_->Stop();
  EXPECT_EQ(handler_.join_calls(), 1);
}

// A server whose threads are all busy answers at once rather than queuing calls without bound.
TEST_F(ControlCallsTest, ServerOutOfThreadsIsResourceExhausted) {
  ControlServerOptions options = TestServerOptions();
  options.max_threads = 2;  // one runs the held Join, the other polls for calls and has no one to hand to
  absl::StatusOr<std::unique_ptr<ControlServer>> small = ControlServer::Start(options, &handler_);
  ASSERT_TRUE(small.ok()) << small.status();
  ControlClientOptions client_options = TestClientOptions((*small)->port());
  absl::StatusOr<std::unique_ptr<ControlClient>> client = ControlClient::Create(client_options);
  ASSERT_TRUE(client.ok());

  handler_.HoldJoins();
  absl::Status held_join;
  std::thread joiner([&] { held_join = (*client)->Join(SampleNodeInfo(1, 2)).status(); });
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (handler_.join_calls() == 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(5));
  ASSERT_EQ(handler_.join_calls(), 1);

  absl::Status busy = (*client)->Stats().status();
  EXPECT_EQ(busy.code(), absl::StatusCode::kResourceExhausted) << busy;
  handler_.Release();
  joiner.join();
  EXPECT_TRUE(held_join.ok()) << held_join;
  // The Join's server thread goes back to the pool a moment after its reply (seen late under TSan):
  // calls are served again once it has.
  absl::Status served = (*client)->Stats().status();
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (absl::IsResourceExhausted(served) && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(5));
    served = (*client)->Stats().status();
  }
  EXPECT_TRUE(served.ok()) << served;
}

TEST_F(ControlCallsTest, ManyThreadsAtOnce) {
  constexpr int kThreads = 4;
  constexpr int kCallsEach = 10;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsEach; ++i) {
        if (!(i % 2 == 0 ? client_->Stats().ok() : client_->Join(SampleNodeInfo(1, 2)).ok())) ++failures[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  EXPECT_EQ(handler_.total_calls(), kThreads * kCallsEach);
  EXPECT_EQ(server_->counters().handled, static_cast<uint64_t>(kThreads * kCallsEach));
}

TEST_F(ControlCallsTest, StoppedServerIsUnavailable) {
  server_->Stop();
  server_->Stop();  // idempotent
  absl::StatusOr<StatsResponse> stats = client_->Stats();
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kUnavailable) << stats.status();
  EXPECT_EQ(handler_.total_calls(), 0);
}

}  // namespace
}  // namespace fathom::control
