#include "platform/msg/pending_calls.h"

#include <algorithm>
#include <functional>

namespace fathom::msg {

namespace {
constexpr auto kLater = std::greater<std::pair<absl::Time, uint64_t>>();
}  // namespace

uint64_t PendingCalls::Add(NodeId peer, absl::Time deadline, ReplyCallback done) {
  const uint64_t id = next_id_++;
  calls_.emplace(id, Call{peer, deadline, std::move(done)});
  heap_.emplace_back(deadline, id);
  std::push_heap(heap_.begin(), heap_.end(), kLater);
  RebuildHeapIfBloated();
  return id;
}

std::optional<NodeId> PendingCalls::PeerOf(uint64_t id) const {
  auto it = calls_.find(id);
  if (it == calls_.end()) return std::nullopt;
  return it->second.peer;
}

std::optional<PendingCalls::Call> PendingCalls::Take(uint64_t id) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return std::nullopt;
  std::optional<Call> call(std::move(it->second));
  calls_.erase(it);
  return call;
}

void PendingCalls::PopFinished() {
  while (!heap_.empty() && !calls_.contains(heap_.front().second)) {
    std::pop_heap(heap_.begin(), heap_.end(), kLater);
    heap_.pop_back();
  }
}

void PendingCalls::RebuildHeapIfBloated() {
  // Finished calls leave their heap entry behind until its deadline; rebuild before that costs memory.
  if (heap_.size() <= 2 * calls_.size() + 64) return;
  heap_.clear();
  for (const auto& [id, call] : calls_) heap_.emplace_back(call.deadline, id);
  std::make_heap(heap_.begin(), heap_.end(), kLater);
}

absl::Time PendingCalls::next_deadline() {
  PopFinished();
  return heap_.empty() ? absl::InfiniteFuture() : heap_.front().first;
}

void PendingCalls::TakeExpired(absl::Time now, std::vector<Call>& out) {
  while (true) {
    PopFinished();
    if (heap_.empty() || heap_.front().first > now) return;
    const uint64_t id = heap_.front().second;
    std::pop_heap(heap_.begin(), heap_.end(), kLater);
    heap_.pop_back();
    if (std::optional<Call> call = Take(id)) out.push_back(std::move(*call));
  }
}

void PendingCalls::TakeForPeer(NodeId peer, std::vector<Call>& out) {
  for (auto it = calls_.begin(); it != calls_.end();) {
    if (it->second.peer == peer) {
      out.push_back(std::move(it->second));
      it = calls_.erase(it);
    } else {
      ++it;
    }
  }
}

void PendingCalls::TakeAll(std::vector<Call>& out) {
  for (auto& [id, call] : calls_) out.push_back(std::move(call));
  calls_.clear();
  heap_.clear();
}

}  // namespace fathom::msg
