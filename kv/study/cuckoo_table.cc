#include "kv/study/cuckoo_table.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_set.h"

namespace fathom::kv::study {

CuckooTable::CuckooTable(size_t capacity, uint64_t seed, CuckooOptions options)
    : options_(options), slots_(capacity) {
  for (int way = 0; way < kWays; ++way) hash_seeds_[way] = DeriveSeed(seed, way);
}

std::array<size_t, CuckooTable::kWays> CuckooTable::Candidates(uint64_t key) const {
  std::array<size_t, kWays> candidates;
  for (int way = 0; way < kWays; ++way) {
    candidates[way] = ReduceToRange(SeededHash(key, hash_seeds_[way]), slots_.size());
  }
  return candidates;
}

LookupResult CuckooTable::Lookup(uint64_t key) const {
  const std::array<size_t, kWays> candidates = Candidates(key);
  LookupResult result;
  for (int way = 0; way < kWays; ++way) {
    if (std::find(candidates.begin(), candidates.begin() + way, candidates[way]) != candidates.begin() + way) {
      continue;  // already read this slot
    }
    ++result.probes;
    const Slot& slot = slots_[candidates[way]];
    if (slot.occupied && slot.key == key) {
      result.found = true;
      return result;
    }
  }
  return result;
}

absl::Status CuckooTable::Insert(uint64_t key) {
  if (Lookup(key).found) return absl::AlreadyExistsError("key already in the table");
  const std::array<size_t, kWays> candidates = Candidates(key);
  for (size_t candidate : candidates) {
    if (!slots_[candidate].occupied) {
      slots_[candidate] = Slot{key, true};
      ++size_;
      return absl::OkStatus();
    }
  }
  std::vector<size_t> path;
  if (!FindPath(candidates, path)) {
    return absl::ResourceExhaustedError("cuckoo displacement search found no free slot; the table needs a resize");
  }
  // Last to first: the free slot takes the key before it, and so on; the new key goes in last.
  for (size_t i = path.size() - 1; i > 0; --i) {
    slots_[path[i]] = slots_[path[i - 1]];
    ++moves_;
    if (move_observer_) move_observer_();
  }
  slots_[path[0]] = Slot{key, true};
  ++size_;
  return absl::OkStatus();
}

bool CuckooTable::FindPath(const std::array<size_t, kWays>& roots, std::vector<size_t>& path) const {
  struct Node {
    size_t slot;
    int parent;  // index into `nodes`, -1 for a root
  };
  std::vector<Node> nodes;
  absl::flat_hash_set<size_t> seen;
  const size_t limit = static_cast<size_t>(std::max(options_.max_search_slots, kWays));
  nodes.reserve(limit);
  for (size_t root : roots) {
    if (seen.insert(root).second) nodes.push_back({root, -1});
  }
  // `nodes` doubles as the breadth-first queue: nodes[next] is the next occupied slot to expand.
  for (size_t next = 0; next < nodes.size(); ++next) {
    const uint64_t resident = slots_[nodes[next].slot].key;
    for (size_t alternative : Candidates(resident)) {
      if (!seen.insert(alternative).second) continue;
      if (!slots_[alternative].occupied) {
        path.clear();
        path.push_back(alternative);
        for (int at = static_cast<int>(next); at >= 0; at = nodes[at].parent) path.push_back(nodes[at].slot);
        std::reverse(path.begin(), path.end());
        return true;
      }
      if (nodes.size() >= limit) return false;
      nodes.push_back({alternative, static_cast<int>(next)});
    }
  }
  return false;
}

}  // namespace fathom::kv::study
