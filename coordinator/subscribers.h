// SubscriberList: delivers configurations to subscribers on its own thread, in epoch order, never under
// the owner's locks. Both coordinators use it. With Delivery::kByCaller it has no thread: whoever owns it
// calls DeliverPending (ZooKeeperCoordinator on an executor: the replayable simulation).
//
//   SubscriberList subscribers;
//   auto sub = subscribers.Subscribe([](const Configuration& c) { ... });  // gets the latest first
//   subscribers.Publish(config);   // ignored unless its epoch is newer than the last published
#ifndef FATHOM_COORDINATOR_SUBSCRIBERS_H_
#define FATHOM_COORDINATOR_SUBSCRIBERS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/coordinator.h"

namespace fathom::coordinator {

class SubscriberList {
 public:
  enum class Mode { kOwnThread, kByCaller };
  explicit SubscriberList(Mode mode = Mode::kOwnThread);
  ~SubscriberList();  // stops the thread; pending deliveries are dropped

  // kByCaller: delivers everything queued, on the calling thread; returns how many callbacks ran.
  // Nothing (0) with a thread of its own.
  size_t DeliverPending();
  // Queues `config` for every subscriber if its epoch is newer than the last one published.
  void Publish(const Configuration& config);
  std::unique_ptr<Subscription> Subscribe(Coordinator::Callback callback);
  // The newest published configuration.
  std::optional<Configuration> latest() const;

 private:
  class Handle;
  struct Delivery {
    std::shared_ptr<const Configuration> config;
    uint64_t only = 0;  // a subscriber id, or 0 for all
  };
  void Unsubscribe(uint64_t id);
  void Run();
  // Delivers the queue's first entry to its subscribers (mu_ released around each callback); returns how
  // many callbacks ran.
  size_t DeliverFront() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::shared_ptr<Coordinator::Callback>> callbacks_ ABSL_GUARDED_BY(mu_);
  std::deque<Delivery> queue_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const Configuration> latest_ ABSL_GUARDED_BY(mu_);
  uint64_t running_ ABSL_GUARDED_BY(mu_) = 0;  // the subscriber whose callback runs now
  // Per subscriber, the last epoch delivered: a subscriber that got the latest at Subscribe skips older
  // queued ones.
  std::map<uint64_t, uint64_t> delivered_ ABSL_GUARDED_BY(mu_);
  std::thread::id thread_id_ ABSL_GUARDED_BY(mu_);  // the delivering thread
  std::thread thread_;
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_SUBSCRIBERS_H_
