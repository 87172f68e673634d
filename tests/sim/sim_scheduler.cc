#include "tests/sim/sim_scheduler.h"

#include <algorithm>

namespace fathom::sim {

SimScheduler::SimScheduler(fabric::sim::SimNetwork* network, uint64_t seed) : network_(network), random_(seed) {}

void SimScheduler::Add(node::NodeThread* thread) { threads_.push_back(thread); }

void SimScheduler::Remove(node::NodeThread* thread) {
  threads_.erase(std::remove(threads_.begin(), threads_.end(), thread), threads_.end());
  frozen_.erase(thread);
}

void SimScheduler::AddBackground(std::function<size_t()> work) { background_.push_back(std::move(work)); }

void SimScheduler::Freeze(node::NodeThread* thread) { frozen_.insert(thread); }
void SimScheduler::Resume(node::NodeThread* thread) { frozen_.erase(thread); }

size_t SimScheduler::Round() {
  ++rounds_;
  // A copy: a turn may freeze a node (SimCluster::Stop), and frozen threads are skipped below.
  std::vector<node::NodeThread*> order = threads_;
  std::shuffle(order.begin(), order.end(), random_);
  size_t work = 0;
  for (node::NodeThread* thread : order) {
    if (frozen_.contains(thread)) continue;
    if (std::find(threads_.begin(), threads_.end(), thread) == threads_.end()) continue;
    work += thread->Turn();
  }
  if (!in_background_) {
    in_background_ = true;
    for (auto& run : background_) work += run();
    in_background_ = false;
  }
  if (work > 0) {
    // Work takes time too: a thread that polls for something only time brings (a lock held by a stopped
    // node, a retry deadline) must see its deadline come.
    network_->Advance(kBusyRound);
    idle_step_ = kIdleStep;
  } else {
    network_->Advance(idle_step_);
    idle_step_ = std::min(idle_step_ * 2, kMaxIdleStep);
  }
  return work;
}

bool SimScheduler::RunUntil(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = network_->clock().Now() + timeout;
  while (!done()) {
    if (network_->clock().Now() >= deadline) return false;
    Round();
  }
  return true;
}

void SimScheduler::RunFor(absl::Duration d) {
  const absl::Time until = network_->clock().Now() + d;
  while (network_->clock().Now() < until) Round();
}

}  // namespace fathom::sim
