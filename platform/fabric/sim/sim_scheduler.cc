// The scheduler: a priority queue of events in virtual time, the seeded generator, and the driving calls
// (Poll, Wait, RunUntilIdle, Advance).
#include <algorithm>
#include <limits>

#include "platform/fabric/sim/sim_core.h"

namespace fathom::fabric::sim::internal {

namespace {
// Events one Poll or Wait may run: enough for a polling loop to move briskly, few enough that a Poll
// returns promptly to a caller that has other work.
constexpr size_t kEventsPerPoll = 64;
}  // namespace

void SimCore::Schedule(absl::Time time, EventKind kind, uint64_t op, uint64_t chunk_offset,
                       uint64_t chunk_length) {
  events_.push(Event{std::max(time, now_), next_sequence_++, kind, op, chunk_offset, chunk_length});
}

void SimCore::RunNextEvent() {
  const Event event = events_.top();
  events_.pop();
  if (event.time > now_) {
    now_ = event.time;
    clock_.AdvanceTo(now_);
  }
  switch (event.kind) {
    case EventKind::kDeliver:
      Deliver(event.op);
      break;
    case EventKind::kCopyChunk:
      CopyChunk(event);
      break;
    case EventKind::kDeadline:
      if (ops_.count(event.op) > 0) TimeOut(event.op);
      break;
  }
}

size_t SimCore::RunEvents(const WorkerState& waiter, size_t budget) {
  size_t ran = 0;
  while (ran < budget && !events_.empty()) {
    const bool due = events_.top().time <= now_;
    // Jumping ahead is only for a waiter with nothing to return: one with completions ready should get
    // them at the current virtual time.
    if (!due && (!waiter.ready.empty() || !options_.idle_polls_jump_ahead)) break;
    RunNextEvent();
    ++ran;
  }
  return ran;
}

uint64_t SimCore::UniformInt(uint64_t low, uint64_t high) {
  // Plain modulo rather than std::uniform_int_distribution, whose algorithm differs between standard
  // libraries: a seed should replay the same run wherever it is built. The bias is negligible here.
  const uint64_t span = high - low;
  if (span == std::numeric_limits<uint64_t>::max()) return rng_();
  return low + rng_() % (span + 1);
}

bool SimCore::Chance(double p) {
  if (p <= 0) return false;  // draws nothing, so turning a knob off leaves the rest of the run unchanged
  if (p >= 1) return true;
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53 < p;
}

absl::Duration SimCore::RandomDurationBelow(absl::Duration limit) {
  const int64_t nanos = absl::ToInt64Nanoseconds(limit);
  if (nanos <= 1) return absl::ZeroDuration();
  return absl::Nanoseconds(static_cast<int64_t>(UniformInt(0, static_cast<uint64_t>(nanos - 1))));
}

size_t SimCore::Poll(uint64_t worker, absl::Span<Completion> out) {
  CoreLock lock(&mu_);
  WorkerState* self = FindWorker(worker);
  if (self == nullptr) return 0;
  RunEvents(*self, kEventsPerPoll);
  ExpireUnflushed(*self);
  const size_t n = std::min(out.size(), self->ready.size());
  for (size_t i = 0; i < n; ++i) {
    out[i] = std::move(self->ready.front());
    self->ready.pop_front();
  }
  self->outstanding -= n;
  return n;
}

void SimCore::Wait(uint64_t worker, absl::Duration timeout) {
  const absl::Time real_deadline = absl::Now() + timeout;
  CoreLock lock(&mu_);
  while (true) {
    WorkerState* self = FindWorker(worker);
    if (self == nullptr) return;
    ExpireUnflushed(*self);
    if (!self->ready.empty()) return;
    if (self->signaled) {
      self->signaled = false;
      return;
    }
    if (!events_.empty()) {
      // Virtual time never needs real time to pass: make progress and let the caller poll.
      RunEvents(*self, kEventsPerPoll);
      return;
    }
    // Nothing can happen until another thread posts, flushes, faults or signals.
    const bool timed_out = ::fathom::WaitWithDeadline(&work_cv_, &mu_, real_deadline);
    if (timed_out) return;
  }
}

void SimCore::Signal(uint64_t worker) {
  CoreLock lock(&mu_);
  if (WorkerState* self = FindWorker(worker)) self->signaled = true;
  work_cv_.SignalAll();
}

size_t SimCore::Outstanding(uint64_t worker) const {
  CoreLock lock(&mu_);
  auto it = workers_.find(worker);
  return it == workers_.end() ? 0 : it->second.outstanding;
}

size_t SimCore::RunUntilIdle() {
  CoreLock lock(&mu_);
  size_t ran = 0;
  while (!events_.empty()) {
    RunNextEvent();
    ++ran;
  }
  return ran;
}

void SimCore::Advance(absl::Duration d) {
  CoreLock lock(&mu_);
  const absl::Time until = now_ + std::max(d, absl::ZeroDuration());
  while (!events_.empty() && events_.top().time <= until) RunNextEvent();
  now_ = until;
  clock_.AdvanceTo(now_);
}

}  // namespace fathom::fabric::sim::internal
