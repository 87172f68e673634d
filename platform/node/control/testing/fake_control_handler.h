// FakeControlHandler: a ControlHandler for tests that counts its calls, answers Join with a set
// NodeInfo (or a set error), and can hold Join calls until the test releases them.
//
//   FakeControlHandler handler(SampleNodeInfo(2));
//   ... start a ControlServer with &handler, call it ...
//   EXPECT_EQ(handler.join_calls(), 0);       // e.g. after a rejected call
//   handler.HoldJoins();                      // Join now blocks until Release() (or 60 s)
#ifndef FATHOM_PLATFORM_NODE_CONTROL_TESTING_FAKE_CONTROL_HANDLER_H_
#define FATHOM_PLATFORM_NODE_CONTROL_TESTING_FAKE_CONTROL_HANDLER_H_

#include <string>
#include <string_view>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "platform/base/mutex.h"
#include "platform/node/control/control_handler.h"

namespace fathom::control::testing {

class FakeControlHandler final : public ControlHandler {
 public:
  explicit FakeControlHandler(NodeInfo reply) : reply_(std::move(reply)) {}

  absl::StatusOr<NodeInfo> OnJoin(const JoinRequest& request) override {
    MutexLock lock(&mu_);
    ++join_calls_;
    last_join_ = request;
    // Bounded, so a test that forgets Release() fails instead of hanging.
    const absl::Time give_up = absl::Now() + absl::Seconds(60);
    while (hold_joins_ && !WaitWithDeadline(&released_, &mu_, give_up)) {
    }
    if (!join_error_.ok()) return join_error_;
    return reply_;
  }

  StatsResponse OnStats() override {
    MutexLock lock(&mu_);
    ++stats_calls_;
    StatsResponse stats;
    stats.set_node_id(reply_.node_id());
    stats.set_incarnation(reply_.incarnation());
    stats.set_uptime_micros(1234);
    (*stats.mutable_counters())["msg.messages_sent"] = 7;
    (*stats.mutable_counters())["control.calls_handled"] = 999;  // the server must overwrite this
    return stats;
  }

  void OnShutdown(std::string_view reason) override {
    MutexLock lock(&mu_);
    ++shutdown_calls_;
    last_shutdown_reason_ = std::string(reason);
  }

  // Join calls block from now on until Release().
  void HoldJoins() {
    MutexLock lock(&mu_);
    hold_joins_ = true;
  }
  void Release() {
    MutexLock lock(&mu_);
    hold_joins_ = false;
    released_.SignalAll();
  }
  void FailJoinsWith(absl::Status error) {
    MutexLock lock(&mu_);
    join_error_ = std::move(error);
  }
  void ReplyWith(NodeInfo reply) {
    MutexLock lock(&mu_);
    reply_ = std::move(reply);
  }

  int join_calls() const {
    MutexLock lock(&mu_);
    return join_calls_;
  }
  int stats_calls() const {
    MutexLock lock(&mu_);
    return stats_calls_;
  }
  int shutdown_calls() const {
    MutexLock lock(&mu_);
    return shutdown_calls_;
  }
  int total_calls() const {
    MutexLock lock(&mu_);
    return join_calls_ + stats_calls_ + shutdown_calls_;
  }
  JoinRequest last_join() const {
    MutexLock lock(&mu_);
    return last_join_;
  }
  std::string last_shutdown_reason() const {
    MutexLock lock(&mu_);
    return last_shutdown_reason_;
  }

 private:
  mutable absl::Mutex mu_;
  absl::CondVar released_;
  NodeInfo reply_ ABSL_GUARDED_BY(mu_);
  absl::Status join_error_ ABSL_GUARDED_BY(mu_);
  bool hold_joins_ ABSL_GUARDED_BY(mu_) = false;
  int join_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int stats_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int shutdown_calls_ ABSL_GUARDED_BY(mu_) = 0;
  JoinRequest last_join_ ABSL_GUARDED_BY(mu_);
  std::string last_shutdown_reason_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fathom::control::testing

#endif  // FATHOM_PLATFORM_NODE_CONTROL_TESTING_FAKE_CONTROL_HANDLER_H_
