// Executor: who runs node threads' event loops and a node's control-plane work. By default every
// NodeThread runs its loop on a thread of its own, and the control plane (lease ticks, the membership
// follower) runs on threads of its own too. An Executor given in NodeOptions takes that over instead: it
// calls NodeThread::Turn (one turn of the loop) for every thread it was given and every task added, in an
// order it chooses, on whatever thread it likes, and a blocking wait (NodeThread::StartAndWait,
// Node::RunOnThread, WaitUntil below) becomes a call to RunUntil on the waiting thread. The replayable
// simulation (tests/sim/) runs whole servers this way on one thread, in an order drawn from a seed.
#ifndef FATHOM_PLATFORM_NODE_EXECUTOR_H_
#define FATHOM_PLATFORM_NODE_EXECUTOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/time/time.h"
#include "platform/base/clock.h"

namespace fathom::node {

class NodeThread;

class Executor {
 public:
  // One step of control-plane work: does what is due (by the owner's clock) and returns how much it did
  // (0: nothing was due).
  using Task = std::function<size_t()>;

  virtual ~Executor() = default;
  // `thread` has started: run its turns from now on.
  virtual void Add(NodeThread* thread) = 0;
  // `thread` is stopping: never run it again (it tears down after this returns).
  virtual void Remove(NodeThread* thread) = 0;
  // Runs `task` again and again beside the threads' turns (never inside itself: a task that waits with
  // RunUntil lets the others run meanwhile) until RemoveTask with the id returned. `owner` is the node id
  // whose work it is (0: none), so the executor can stop one node's work with its threads.
  virtual uint64_t AddTask(uint32_t owner, Task task) = 0;
  // The task never starts again (a call from inside it returns first).
  virtual void RemoveTask(uint64_t id) = 0;
  // Runs turns and tasks until `done` returns true (true) or `timeout` has passed on the executor's clock
  // (false).
  virtual bool RunUntil(const std::function<bool()>& done, absl::Duration timeout) = 0;
};

// Waits until `done` returns true (true) or `timeout` has passed on `clock` (false): through the executor
// if there is one (its clock is `clock`), else checking every `poll` on the calling thread.
bool WaitUntil(Executor* executor, const Clock& clock, const std::function<bool()>& done, absl::Duration timeout,
               absl::Duration poll = absl::Milliseconds(10));

}  // namespace fathom::node

#endif  // FATHOM_PLATFORM_NODE_EXECUTOR_H_
