#include "txn/log_epochs.h"

#include "platform/base/mutex.h"

namespace fathom::txn {

bool LogEpochs::TryLock(uint64_t* epoch) {
  MutexLock lock(&mu_);
  if (closing_) return false;
  ++locks_[current_];
  *epoch = current_;
  return true;
}

void LogEpochs::Released(uint64_t epoch) {
  MutexLock lock(&mu_);
  auto it = locks_.find(epoch);
  if (it == locks_.end()) return;
  if (--it->second == 0) locks_.erase(it);
}

void LogEpochs::Close() {
  MutexLock lock(&mu_);
  closing_ = true;
  closing_flag_.store(true, std::memory_order_release);
}

bool LogEpochs::Drained() const {
  MutexLock lock(&mu_);
  return closing_ && (locks_.empty() || locks_.begin()->first > current_);
}

void LogEpochs::Open(uint64_t next) {
  MutexLock lock(&mu_);
  current_ = next;
  closing_ = false;
  closing_flag_.store(false, std::memory_order_release);
}

bool LogEpochs::HoldsNoLock() const {
  MutexLock lock(&mu_);
  return locks_.empty();
}

void LogEpochs::JumpTo(uint64_t epoch) {
  MutexLock lock(&mu_);
  current_ = epoch;
}

uint64_t LogEpochs::current() const {
  MutexLock lock(&mu_);
  return current_;
}

void LogEpochs::SetDurable(uint64_t epoch) {
  uint64_t seen = durable_.load(std::memory_order_acquire);
  while (epoch > seen && !durable_.compare_exchange_weak(seen, epoch, std::memory_order_acq_rel)) {
  }
}

}  // namespace fathom::txn
