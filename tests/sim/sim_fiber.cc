#include "tests/sim/sim_fiber.h"

#include <cstdint>
#include <cstdlib>

#if defined(__SANITIZE_THREAD__)
#define FATHOM_SIM_TSAN 1
#include <sanitizer/tsan_interface.h>
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FATHOM_SIM_ASAN 1
#include <sanitizer/common_interface_defs.h>
#endif

namespace fathom::sim {
namespace {

thread_local SimFiber* current = nullptr;

}  // namespace

SimFiber::SimFiber(std::function<void()> body, size_t stack_bytes)
    : body_(std::move(body)), stack_(new char[stack_bytes]), stack_bytes_(stack_bytes) {
  getcontext(&context_);
  context_.uc_stack.ss_sp = stack_.get();
  context_.uc_stack.ss_size = stack_bytes_;
  context_.uc_link = nullptr;  // the body never returns
  const uintptr_t self = reinterpret_cast<uintptr_t>(this);
  makecontext(&context_, reinterpret_cast<void (*)()>(&SimFiber::Entry), 2, static_cast<unsigned int>(self >> 32),
              static_cast<unsigned int>(self & 0xffffffffu));
#ifdef FATHOM_SIM_TSAN
  tsan_fiber_ = __tsan_create_fiber(0);
#endif
}

SimFiber::~SimFiber() {
#ifdef FATHOM_SIM_TSAN
  __tsan_destroy_fiber(tsan_fiber_);
#endif
}

SimFiber* SimFiber::Current() { return current; }

void SimFiber::Entry(unsigned int high, unsigned int low) {
  SimFiber* fiber = reinterpret_cast<SimFiber*>((static_cast<uintptr_t>(high) << 32) | low);
#ifdef FATHOM_SIM_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &fiber->caller_stack_bottom_, &fiber->caller_stack_size_);
#endif
  fiber->body_();
  std::abort();  // a body yields forever
}

void SimFiber::Resume() {
  SimFiber* outer = current;
  current = this;
#ifdef FATHOM_SIM_TSAN
  tsan_caller_ = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(tsan_fiber_, 0);
#endif
#ifdef FATHOM_SIM_ASAN
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, stack_.get(), stack_bytes_);
#endif
  swapcontext(&caller_, &context_);
#ifdef FATHOM_SIM_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  current = outer;
}

void SimFiber::Yield() {
#ifdef FATHOM_SIM_TSAN
  __tsan_switch_to_fiber(tsan_caller_, 0);
#endif
#ifdef FATHOM_SIM_ASAN
  __sanitizer_start_switch_fiber(&asan_fake_stack_, caller_stack_bottom_, caller_stack_size_);
#endif
  swapcontext(&context_, &caller_);
#ifdef FATHOM_SIM_ASAN
  __sanitizer_finish_switch_fiber(asan_fake_stack_, &caller_stack_bottom_, &caller_stack_size_);
#endif
}

}  // namespace fathom::sim
