#include "tests/sim/sim_scheduler.h"

#include <algorithm>
#include <cstdlib>

namespace fathom::sim {

SimScheduler::SimScheduler(fabric::sim::SimNetwork* network, uint64_t seed) : network_(network), random_(seed) {}

// A task still in a step here is abandoned on its fiber (its owner was destroyed without removing it).
SimScheduler::~SimScheduler() = default;

void SimScheduler::Add(node::NodeThread* thread) { threads_.push_back(thread); }

void SimScheduler::Remove(node::NodeThread* thread) {
  threads_.erase(std::remove(threads_.begin(), threads_.end(), thread), threads_.end());
  frozen_.erase(thread);
}

uint64_t SimScheduler::AddTask(uint32_t owner, Task task) {
  auto scheduled = std::make_unique<ScheduledTask>();
  ScheduledTask* raw = scheduled.get();
  raw->id = next_task_id_++;
  raw->owner = owner;
  raw->task = std::move(task);
  raw->fiber = std::make_unique<SimFiber>([raw] {
    for (;;) {
      raw->work = raw->task();
      raw->in_step = false;
      SimFiber::Current()->Yield();
    }
  });
  tasks_.push_back(std::move(scheduled));
  return raw->id;
}

void SimScheduler::RemoveTask(uint64_t id) {
  ScheduledTask* task = Find(id);
  if (task == nullptr) return;
  task->removed = true;
  // Like joining a thread: a step under way ends first (unless this is that step, or its node is frozen:
  // a crashed node's step never ends). Looked up again each time: the round that ends it erases it.
  if (task != running_ && !frozen_owners_.contains(task->owner)) {
    RunUntil(
        [this, id] {
          ScheduledTask* still = Find(id);
          return still == nullptr || !still->in_step;
        },
        absl::Hours(1));
  }
}

SimScheduler::ScheduledTask* SimScheduler::Find(uint64_t id) {
  auto it = std::find_if(tasks_.begin(), tasks_.end(), [id](const auto& t) { return t->id == id; });
  return it == tasks_.end() ? nullptr : it->get();
}

void SimScheduler::Freeze(node::NodeThread* thread) { frozen_.insert(thread); }
void SimScheduler::Resume(node::NodeThread* thread) { frozen_.erase(thread); }
void SimScheduler::FreezeTasks(uint32_t owner) { frozen_owners_.insert(owner); }
void SimScheduler::ResumeTasks(uint32_t owner) { frozen_owners_.erase(owner); }

size_t SimScheduler::Step(ScheduledTask& task) {
  if (frozen_owners_.contains(task.owner)) return 0;
  if (task.in_step) {
    // Waiting: resumed once its wait is over.
    const bool done = (*task.wait_done)();
    if (!done && network_->clock().Now() < task.wait_deadline) return 0;
    task.wait_result = done;
  } else {
    if (task.removed) return 0;
    task.in_step = true;
  }
  task.wait_done = nullptr;
  // Steps run only from the scheduler's own stack (a wait on a fiber yields instead of running rounds).
  running_ = &task;
  task.fiber->Resume();
  running_ = nullptr;
  if (task.in_step) return 1;  // it waits again: what it did until then counts as work
  return task.work;
}

size_t SimScheduler::Round() {
  ++rounds_;
  ++rounds_running_;
  // A copy: a turn may freeze a node (SimCluster::Stop), and frozen threads are skipped below.
  std::vector<node::NodeThread*> order = threads_;
  std::shuffle(order.begin(), order.end(), random_);
  size_t work = 0;
  for (node::NodeThread* thread : order) {
    if (frozen_.contains(thread)) continue;
    if (std::find(threads_.begin(), threads_.end(), thread) == threads_.end()) continue;
    work += thread->Turn();
  }
  // By index: a step may add tasks (appended) or remove some (marked; erased by the outermost round).
  for (size_t i = 0; i < tasks_.size(); ++i) work += Step(*tasks_[i]);
  if (--rounds_running_ == 0) {
    tasks_.erase(std::remove_if(tasks_.begin(), tasks_.end(), [](const auto& t) { return t->removed && !t->in_step; }),
                 tasks_.end());
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
  if (ScheduledTask* task = running_; task != nullptr) {
    if (done()) return true;
    task->wait_done = &done;
    task->wait_deadline = deadline;
    task->fiber->Yield();  // back in Step, which resumes it when the wait is over
    return task->wait_result;
  }
  while (!done()) {
    if (network_->clock().Now() >= deadline) return false;
    Round();
  }
  return true;
}

void SimScheduler::RunFor(absl::Duration d) {
  const absl::Time until = network_->clock().Now() + d;
  if (running_ != nullptr) {
    RunUntil([] { return false; }, d);
    return;
  }
  while (network_->clock().Now() < until) Round();
}

}  // namespace fathom::sim
