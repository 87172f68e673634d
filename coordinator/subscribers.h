// SubscriberList: delivers configurations to subscribers on its own thread, in epoch order, never under
// the owner's locks. Both coordinators use it.
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
  SubscriberList();
  ~SubscriberList();  // stops the thread; pending deliveries are dropped

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

  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::shared_ptr<Coordinator::Callback>> callbacks_ ABSL_GUARDED_BY(mu_);
  std::deque<Delivery> queue_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const Configuration> latest_ ABSL_GUARDED_BY(mu_);
  uint64_t running_ ABSL_GUARDED_BY(mu_) = 0;  // the subscriber whose callback runs now
  std::thread::id thread_id_;
  std::thread thread_;
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_SUBSCRIBERS_H_
