// SimScheduler: runs every node thread and control-plane task of a simulated cluster on the calling
// thread, in an order drawn from a seed, in the SimNetwork's virtual time (node::Executor). One round gives
// each running thread one turn of its event loop, in a freshly shuffled order, then each task (the
// servers' lease ticks and membership followers, the cluster's configuration deliveries: AddTask) one
// step, in the order added. Each task runs on a fiber of its own (sim_fiber.h): a task that waits
// (RunUntil) switches back here and is resumed once its wait is over, as a thread would be, while the
// rest go on. A round in which nobody had work moves virtual time on by an idle step (kIdleStep, doubling
// over idle rounds up to kMaxIdleStep, like a real node thread's sleep; the fabric runs every event due
// meanwhile), and a round with work by kBusyRound, so waits end even while a thread polls for what only
// time brings. Same seed, same calls: the same interleaving, hence the same history.
//
//   SimScheduler scheduler(&network, seed);
//   options.executor = &scheduler;               // NodeOptions of every node
//   scheduler.RunUntil([&] { return done; }, absl::Seconds(10));   // virtual seconds
#ifndef FATHOM_TESTS_SIM_SIM_SCHEDULER_H_
#define FATHOM_TESTS_SIM_SIM_SCHEDULER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "absl/time/time.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/node/executor.h"
#include "platform/node/node_thread.h"
#include "tests/sim/sim_fiber.h"

namespace fathom::sim {

class SimScheduler final : public node::Executor {
 public:
  // Virtual time a round with no work moves on by (timers, backoffs, lease periods).
  static constexpr absl::Duration kIdleStep = absl::Microseconds(20);
  static constexpr absl::Duration kMaxIdleStep = absl::Milliseconds(1);
  static constexpr absl::Duration kBusyRound = absl::Microseconds(1);

  SimScheduler(fabric::sim::SimNetwork* network, uint64_t seed);
  ~SimScheduler() override;

  void Add(node::NodeThread* thread) override;
  void Remove(node::NodeThread* thread) override;
  uint64_t AddTask(uint32_t owner, Task task) override;
  // From outside the task: waits (as a thread's join would) for a step it is in the middle of to end.
  void RemoveTask(uint64_t id) override;
  // On the scheduler's own stack: runs rounds. On a task's fiber: switches back to the scheduler until
  // `done` or the timeout.
  bool RunUntil(const std::function<bool()>& done, absl::Duration timeout) override;

  // Runs rounds for `d` of virtual time.
  void RunFor(absl::Duration d);
  // A stopped thread gets no more turns (a node frozen at a protocol step); Resume gives them back.
  void Freeze(node::NodeThread* thread);
  void Resume(node::NodeThread* thread);
  // The tasks of `owner` stop (a crashed node's control plane, even in the middle of a step) until
  // ResumeTasks.
  void FreezeTasks(uint32_t owner);
  void ResumeTasks(uint32_t owner);
  uint64_t rounds() const { return rounds_; }

 private:
  struct ScheduledTask {
    uint64_t id = 0;
    uint32_t owner = 0;
    Task task;
    std::unique_ptr<SimFiber> fiber;
    bool in_step = false;  // resumed for a step that has not ended (it waits, or runs now)
    size_t work = 0;       // what its last step did
    bool removed = false;  // RemoveTask: takes no new step; erased by the outermost round once out of one
    // Its wait (RunUntil on its fiber), while it is in one.
    const std::function<bool()>* wait_done = nullptr;
    absl::Time wait_deadline;
    bool wait_result = false;
  };
  // One round; returns the work done.
  size_t Round();
  // Gives `task` a turn if it may take one (a new step, or the end of its wait); returns its work.
  size_t Step(ScheduledTask& task);
  ScheduledTask* Find(uint64_t id);  // null once erased

  fabric::sim::SimNetwork* const network_;
  std::mt19937_64 random_;
  std::vector<node::NodeThread*> threads_;  // in the order they were added
  std::set<node::NodeThread*> frozen_;
  std::vector<std::unique_ptr<ScheduledTask>> tasks_;  // stable addresses: tasks add and remove tasks
  std::set<uint32_t> frozen_owners_;
  ScheduledTask* running_ = nullptr;  // the task on whose fiber we run now (null: the scheduler's own stack)
  int rounds_running_ = 0;  // Round frames on the stack (erasing waits for the outermost)
  uint64_t next_task_id_ = 1;
  uint64_t rounds_ = 0;
  absl::Duration idle_step_ = kIdleStep;
};

}  // namespace fathom::sim

#endif  // FATHOM_TESTS_SIM_SIM_SCHEDULER_H_
