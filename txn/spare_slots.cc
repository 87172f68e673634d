#include "txn/spare_slots.h"

#include <algorithm>

#include "txn/records.h"

namespace fathom::txn {

std::optional<object::ObjectRef> SpareSlots::Take(uint32_t node, int size_class,
                                                  const std::function<bool(const object::ObjectRef&)>& still_served) {
  auto it = pools_.find(Key{node, size_class});
  if (it == pools_.end()) return std::nullopt;
  std::vector<object::ObjectRef>& kept = it->second.kept;
  while (!kept.empty()) {
    const object::ObjectRef ref = kept.back();
    kept.pop_back();
    if (still_served(ref)) return ref;
  }
  return std::nullopt;
}

void SpareSlots::Put(uint32_t node, int size_class, const object::ObjectRef& ref) {
  pools_[Key{node, size_class}].kept.push_back(ref);
}

size_t SpareSlots::DropKept() {
  size_t dropped = 0;
  for (auto& [key, pool] : pools_) {
    dropped += pool.kept.size();
    pool.kept.clear();
  }
  return dropped;
}

bool SpareSlots::Wait(uint32_t node, int size_class, Done done) {
  Pool& pool = pools_[Key{node, size_class}];
  pool.waiting.push_back(std::move(done));
  if (pool.asking) return false;
  pool.asking = true;
  return true;
}

uint32_t SpareSlots::Asking(uint32_t node, int size_class) const {
  auto it = pools_.find(Key{node, size_class});
  const size_t waiting = it == pools_.end() ? 0 : it->second.waiting.size();
  return static_cast<uint32_t>(std::clamp<size_t>(waiting, kBatch, kMaxAllocCount));
}

bool SpareSlots::Fill(uint32_t node, int size_class, absl::StatusOr<std::vector<object::ObjectRef>> refs) {
  // Settle the pool first and run the callbacks last: they may come back here (a retried transaction).
  Pool& pool = pools_[Key{node, size_class}];
  pool.asking = false;
  std::vector<std::pair<Done, absl::StatusOr<object::ObjectRef>>> served;
  if (!refs.ok()) {
    for (Done& done : pool.waiting) served.emplace_back(std::move(done), refs.status());
    pool.waiting.clear();
  } else {
    for (const object::ObjectRef& ref : *refs) {
      if (pool.waiting.empty()) {
        pool.kept.push_back(ref);
        continue;
      }
      served.emplace_back(std::move(pool.waiting.front()), ref);
      pool.waiting.pop_front();
    }
  }
  const bool again = !pool.waiting.empty();
  if (again) pool.asking = true;
  for (auto& [done, result] : served) done(std::move(result));
  return again;
}

size_t SpareSlots::kept() const {
  size_t n = 0;
  for (const auto& [key, pool] : pools_) n += pool.kept.size();
  return n;
}

size_t SpareSlots::waiting() const {
  size_t n = 0;
  for (const auto& [key, pool] : pools_) n += pool.waiting.size();
  return n;
}

}  // namespace fathom::txn
