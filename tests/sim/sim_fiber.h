// SimFiber: a stack of its own for one task of the simulation, switched to and from on the scheduler's one
// thread (ucontext). A task that waits (RunUntil) switches back to the scheduler instead of running rounds
// inside itself, so every task waits as a thread of its own would: one that waits long (a lease request
// to a partitioned CM) holds up no other, and waits end in any order, not only innermost first.
// ThreadSanitizer and AddressSanitizer are told of every switch.
//
//   SimFiber fiber([&] { for (;;) { Step(); SimFiber::Current()->Yield(); } });
//   fiber.Resume();                 // runs until the body yields
#ifndef FATHOM_TESTS_SIM_SIM_FIBER_H_
#define FATHOM_TESTS_SIM_SIM_FIBER_H_

#include <ucontext.h>

#include <cstddef>
#include <functional>
#include <memory>

namespace fathom::sim {

class SimFiber {
 public:
  // `body` must never return (it yields forever); the fiber is destroyed while yielded.
  explicit SimFiber(std::function<void()> body, size_t stack_bytes = 1 << 20);
  ~SimFiber();
  SimFiber(const SimFiber&) = delete;
  SimFiber& operator=(const SimFiber&) = delete;

  // From the scheduler's own stack: runs the fiber until it yields.
  void Resume();
  // From inside the fiber: back to whoever resumed it.
  void Yield();
  // The fiber running now; null on the scheduler's own stack.
  static SimFiber* Current();

 private:
  static void Entry(unsigned int high, unsigned int low);

  std::function<void()> body_;
  std::unique_ptr<char[]> stack_;
  const size_t stack_bytes_;
  ucontext_t context_;
  ucontext_t caller_;
  void* tsan_fiber_ = nullptr;
  void* tsan_caller_ = nullptr;
  void* asan_fake_stack_ = nullptr;
  const void* caller_stack_bottom_ = nullptr;
  size_t caller_stack_size_ = 0;
};

}  // namespace fathom::sim

#endif  // FATHOM_TESTS_SIM_SIM_FIBER_H_
