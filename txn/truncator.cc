#include "txn/truncator.h"

#include <algorithm>

namespace fathom::txn {

void Truncator::Add(uint32_t node, uint64_t counter, absl::Time now) {
  Owed& owed = owed_[node];
  if (owed.counters.empty()) owed.oldest = now;
  owed.counters.push_back(counter);
  ++pending_;
}

std::vector<uint64_t> Truncator::Take(uint32_t node, size_t max) {
  auto it = owed_.find(node);
  if (it == owed_.end() || it->second.counters.empty()) return {};
  std::vector<uint64_t>& all = it->second.counters;
  const size_t n = std::min(max, all.size());
  std::vector<uint64_t> taken(all.begin(), all.begin() + n);
  all.erase(all.begin(), all.begin() + n);
  pending_ -= n;
  if (all.empty()) it->second.oldest = absl::InfiniteFuture();
  return taken;
}

void Truncator::PutBack(uint32_t node, const std::vector<uint64_t>& counters, absl::Time now) {
  for (uint64_t counter : counters) Add(node, counter, now);
}

size_t Truncator::Poll(msg::Messenger& messenger, const TxnId& id, absl::Time now) {
  if (pending_ == 0) return 0;
  size_t sent = 0;
  for (auto& [node, owed] : owed_) {
    if (owed.counters.empty() || (now - owed.oldest < delay_ && owed.counters.size() < batch_)) continue;
    Record record;
    record.kind = RecordKind::kTruncate;
    record.id = id;
    const size_t n = std::min<size_t>(owed.counters.size(), kMaxTruncatedPerRecord);
    record.truncated.assign(owed.counters.begin(), owed.counters.begin() + n);
    absl::Status s = messenger.Send(node, kTruncateMessage, EncodeRecord(record));
    if (absl::IsResourceExhausted(s)) continue;  // a full ring: next time
    // Sent, or the node is gone (its records died with it): either way nothing more is owed.
    owed.counters.erase(owed.counters.begin(), owed.counters.begin() + n);
    pending_ -= n;
    owed.oldest = owed.counters.empty() ? absl::InfiniteFuture() : now;
    if (s.ok()) ++sent;
  }
  return sent;
}

size_t Truncator::pending() const { return pending_; }

}  // namespace fathom::txn
