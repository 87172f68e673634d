#include "txn/truncator.h"

#include <algorithm>

namespace fathom::txn {

void Truncator::Add(uint32_t node, uint64_t epoch, uint64_t counter, absl::Time now) {
  Owed& owed = owed_[{node, epoch}];
  if (owed.counters.empty()) owed.oldest = now;
  owed.counters.push_back(counter);
  ++pending_;
}

std::vector<uint64_t> Truncator::Take(uint32_t node, uint64_t epoch, size_t max) {
  auto it = owed_.find({node, epoch});
  if (it == owed_.end() || it->second.counters.empty()) return {};
  const size_t n = std::min(max, it->second.counters.size());
  std::vector<uint64_t> taken(it->second.counters.begin(), it->second.counters.begin() + n);
  Drop(it->second, n, it->second.oldest);
  if (it->second.counters.empty()) owed_.erase(it);
  return taken;
}

void Truncator::PutBack(uint32_t node, uint64_t epoch, const std::vector<uint64_t>& counters, absl::Time now) {
  for (uint64_t counter : counters) Add(node, epoch, counter, now);
}

void Truncator::Drop(Owed& owed, size_t n, absl::Time now) {
  owed.counters.erase(owed.counters.begin(), owed.counters.begin() + n);
  pending_ -= n;
  owed.oldest = owed.counters.empty() ? absl::InfiniteFuture() : now;
}

size_t Truncator::Poll(msg::Messenger& messenger, uint32_t node_id, uint16_t thread, const CoordinatorMark& mark,
                       absl::Time now, const std::function<bool(uint32_t node)>& is_member) {
  if (pending_ == 0) return 0;
  size_t sent = 0;
  for (auto it = owed_.begin(); it != owed_.end();) {
    const auto [node, epoch] = it->first;
    Owed& owed = it->second;
    const bool due = now - owed.oldest >= delay_ || owed.counters.size() >= batch_;
    if (owed.counters.empty() || !due || now < owed.retry_at) {
      ++it;
      continue;
    }
    Record record;
    record.kind = RecordKind::kTruncate;
    record.id = TxnId{epoch, node_id, thread, 0};
    // A mark of a later incarnation than the ids' epoch cannot be (the ids are of this process).
    if (mark.incarnation <= epoch) record.mark = mark;
    const size_t n = std::min<size_t>(owed.counters.size(), kMaxTruncatedPerRecord);
    record.truncated.assign(owed.counters.begin(), owed.counters.begin() + n);
    // A write the fabric fails later (a connection that reset) owes the ids again while the node is a
    // member: the replica needs them to apply its commits.
    msg::SendOptions options;
    options.wake = msg::Wake::kWhenAwake;  // truncation is lazy: the replica applies and forgets when it next wakes
    options.on_written = [this, node, epoch, counters = record.truncated, is_member, now](absl::Status written) {
      if (!written.ok() && is_member(node)) PutBack(node, epoch, counters, now);
    };
    // Written, then discarded unread when the node dropped the connection: owed again (truncating twice
    // is harmless).
    options.on_lost = [this, node, epoch, counters = record.truncated, is_member, now](absl::Status) {
      if (is_member(node)) PutBack(node, epoch, counters, now);
    };
    absl::Status s = messenger.Send(node, kTruncateMessage, EncodeRecord(record), std::move(options));
    if (s.ok()) {
      ++sent;
      Drop(owed, n, now);
    } else if (!absl::IsResourceExhausted(s) && !is_member(node)) {
      Drop(owed, owed.counters.size(), now);  // the node left: its records died with it
    } else {
      owed.retry_at = now + delay_;  // a full ring, or a connection that may come back
    }
    it = owed.counters.empty() ? owed_.erase(it) : std::next(it);
  }
  return sent;
}

}  // namespace fathom::txn
