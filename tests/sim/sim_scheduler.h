// SimScheduler: runs every node thread of a simulated cluster on the calling thread, in an order drawn
// from a seed, in the SimNetwork's virtual time (node::Executor). One round gives each running thread one
// turn of its event loop, in a freshly shuffled order, then runs the background work (AddBackground). A
// round in which nobody had work moves virtual time on by an idle step (kIdleStep, doubling over idle
// rounds up to kMaxIdleStep, like a real node thread's sleep; the fabric runs every event due meanwhile),
// and a round with work by kBusyRound, so waits end even while a thread polls for what only time brings.
// Same seed, same calls: the same interleaving, hence the same history.
//
//   SimScheduler scheduler(&network, seed);
//   options.executor = &scheduler;               // NodeOptions of every node
//   scheduler.RunUntil([&] { return done; }, absl::Seconds(10));   // virtual seconds
#ifndef FATHOM_TESTS_SIM_SIM_SCHEDULER_H_
#define FATHOM_TESTS_SIM_SIM_SCHEDULER_H_

#include <cstdint>
#include <functional>
#include <random>
#include <set>
#include <vector>

#include "absl/time/time.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/node/executor.h"
#include "platform/node/node_thread.h"

namespace fathom::sim {

class SimScheduler final : public node::Executor {
 public:
  // Virtual time a round with no work moves on by (timers, backoffs, lease periods).
  static constexpr absl::Duration kIdleStep = absl::Microseconds(20);
  static constexpr absl::Duration kMaxIdleStep = absl::Milliseconds(1);
  static constexpr absl::Duration kBusyRound = absl::Microseconds(1);

  SimScheduler(fabric::sim::SimNetwork* network, uint64_t seed);

  void Add(node::NodeThread* thread) override;
  void Remove(node::NodeThread* thread) override;
  bool RunUntil(const std::function<bool()>& done, absl::Duration timeout) override;

  // Runs rounds for `d` of virtual time.
  void RunFor(absl::Duration d);
  // Runs `work` once per round, after the node threads' turns (the coordinator's deliveries, lease ticks),
  // in the order added; it returns how much it did. A wait that background work starts runs rounds without
  // it (background work never runs inside itself).
  void AddBackground(std::function<size_t()> work);
  // A stopped thread gets no more turns (a node frozen at a protocol step); Resume gives them back.
  void Freeze(node::NodeThread* thread);
  void Resume(node::NodeThread* thread);
  uint64_t rounds() const { return rounds_; }

 private:
  // One round; returns the work done.
  size_t Round();

  fabric::sim::SimNetwork* const network_;
  std::mt19937_64 random_;
  std::vector<node::NodeThread*> threads_;  // in the order they were added
  std::set<node::NodeThread*> frozen_;
  std::vector<std::function<size_t()>> background_;
  bool in_background_ = false;
  uint64_t rounds_ = 0;
  absl::Duration idle_step_ = kIdleStep;
};

}  // namespace fathom::sim

#endif  // FATHOM_TESTS_SIM_SIM_SCHEDULER_H_
