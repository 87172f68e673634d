#include "coordinator/subscribers.h"

#include "platform/base/mutex.h"

namespace fathom::coordinator {

const char* CoordinatorStateName(CoordinatorState state) {
  switch (state) {
    case CoordinatorState::kConnected:
      return "connected";
    case CoordinatorState::kDisconnected:
      return "disconnected";
    case CoordinatorState::kClosed:
      return "closed";
  }
  return "unknown";
}

class SubscriberList::Handle final : public Subscription {
 public:
  Handle(SubscriberList* list, uint64_t id) : list_(list), id_(id) {}
  ~Handle() override { list_->Unsubscribe(id_); }

 private:
  SubscriberList* const list_;
  const uint64_t id_;
};

SubscriberList::SubscriberList(Mode mode) {
  if (mode == Mode::kByCaller) return;
  thread_ = std::thread([this] { Run(); });
  MutexLock lock(&mu_);
  thread_id_ = thread_.get_id();
}

SubscriberList::~SubscriberList() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

size_t SubscriberList::DeliverPending() {
  if (thread_.joinable()) return 0;
  MutexLock lock(&mu_);
  thread_id_ = std::this_thread::get_id();
  size_t ran = 0;
  while (!stop_ && !queue_.empty()) ran += DeliverFront();
  return ran;
}

void SubscriberList::Publish(const Configuration& config) {
  MutexLock lock(&mu_);
  if (latest_ != nullptr && config.epoch() <= latest_->epoch()) return;
  latest_ = std::make_shared<const Configuration>(config);
  queue_.push_back({latest_, 0});
  cv_.SignalAll();
}

std::unique_ptr<Subscription> SubscriberList::Subscribe(Coordinator::Callback callback) {
  MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  callbacks_[id] = std::make_shared<Coordinator::Callback>(std::move(callback));
  // The latest configuration first; later ones are queued after it, so the order holds.
  if (latest_ != nullptr) {
    queue_.push_back({latest_, id});
    cv_.SignalAll();
  }
  return std::make_unique<Handle>(this, id);
}

std::optional<Configuration> SubscriberList::latest() const {
  MutexLock lock(&mu_);
  if (latest_ == nullptr) return std::nullopt;
  return *latest_;
}

void SubscriberList::Unsubscribe(uint64_t id) {
  MutexLock lock(&mu_);
  callbacks_.erase(id);
  // Wait for a running callback of this subscriber, unless we are that callback.
  while (running_ == id && std::this_thread::get_id() != thread_id_) {
    WaitWithDeadline(&cv_, &mu_, absl::InfiniteFuture());
  }
}

void SubscriberList::Run() {
  MutexLock lock(&mu_);
  while (true) {
    while (!stop_ && queue_.empty()) WaitWithDeadline(&cv_, &mu_, absl::InfiniteFuture());
    if (stop_) return;
    DeliverFront();
  }
}

size_t SubscriberList::DeliverFront() {
  Delivery d = std::move(queue_.front());
  queue_.pop_front();
  std::vector<uint64_t> targets;
  if (d.only != 0) {
    targets.push_back(d.only);
  } else {
    for (const auto& [id, cb] : callbacks_) targets.push_back(id);
  }
  size_t ran = 0;
  for (uint64_t id : targets) {
    auto it = callbacks_.find(id);
    if (it == callbacks_.end()) continue;  // unsubscribed meanwhile
    uint64_t& last = delivered_[id];
    if (last != 0 && d.config->epoch() <= last) continue;
    last = d.config->epoch();
    std::shared_ptr<Coordinator::Callback> cb = it->second;
    running_ = id;
    TsanRelease(&mu_);
    mu_.Unlock();
    (*cb)(*d.config);
    mu_.Lock();
    TsanAcquire(&mu_);
    running_ = 0;
    ++ran;
    cv_.SignalAll();
    if (stop_) return ran;
  }
  for (auto it = delivered_.begin(); it != delivered_.end();) {
    it = callbacks_.contains(it->first) ? std::next(it) : delivered_.erase(it);
  }
  return ran;
}

}  // namespace fathom::coordinator
