// Executor: who runs node threads' event loops. By default every NodeThread runs its loop on a thread of
// its own. An Executor given in NodeOptions takes that over instead: it calls NodeThread::Turn (one turn
// of the loop) for every thread it was given, in an order it chooses, on whatever thread it likes, and a
// blocking wait for a node thread's result (NodeThread::StartAndWait, Node::RunOnThread) becomes a call to
// RunUntil on the waiting thread. The replayable simulation (tests/sim/) runs a whole cluster this way on
// one thread, in an order drawn from a seed.
#ifndef FATHOM_PLATFORM_NODE_EXECUTOR_H_
#define FATHOM_PLATFORM_NODE_EXECUTOR_H_

#include <functional>

#include "absl/time/time.h"

namespace fathom::node {

class NodeThread;

class Executor {
 public:
  virtual ~Executor() = default;
  // `thread` has started: run its turns from now on.
  virtual void Add(NodeThread* thread) = 0;
  // `thread` is stopping: never run it again (it tears down after this returns).
  virtual void Remove(NodeThread* thread) = 0;
  // Runs turns until `done` returns true (true) or `timeout` has passed on the executor's clock (false).
  virtual bool RunUntil(const std::function<bool()>& done, absl::Duration timeout) = 0;
};

}  // namespace fathom::node

#endif  // FATHOM_PLATFORM_NODE_EXECUTOR_H_
