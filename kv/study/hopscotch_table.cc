#include "kv/study/hopscotch_table.h"

#include <algorithm>

namespace fathom::kv::study {

HopscotchTable::HopscotchTable(size_t capacity, uint64_t seed, HopscotchOptions options)
    : hash_seed_(DeriveSeed(seed, 0)),
      slots_(capacity),
      neighbourhood_(std::clamp<size_t>(options.neighbourhood, 1, std::max<size_t>(1, capacity / 2))),
      max_probe_distance_(std::clamp<size_t>(options.max_probe_distance, neighbourhood_, capacity)) {}

size_t HopscotchTable::HomeSlot(uint64_t key) const {
  return ReduceToRange(SeededHash(key, hash_seed_), slots_.size());
}

LookupResult HopscotchTable::Lookup(uint64_t key) const {
  const size_t n = slots_.size();
  const size_t home = HomeSlot(key);
  LookupResult result{.found = false, .probes = 1};  // one read of the whole neighbourhood
  for (size_t i = 0, index = home; i < neighbourhood_; ++i, index = index + 1 == n ? 0 : index + 1) {
    if (slots_[index].occupied && slots_[index].key == key) {
      result.found = true;
      break;
    }
  }
  return result;
}

absl::Status HopscotchTable::Insert(uint64_t key) {
  if (Lookup(key).found) return absl::AlreadyExistsError("key already in the table");
  const size_t n = slots_.size();
  const size_t home = HomeSlot(key);
  size_t distance = 0;  // from home to the free slot
  while (distance < max_probe_distance_ && slots_[(home + distance) % n].occupied) ++distance;
  if (distance == max_probe_distance_) {
    return absl::ResourceExhaustedError("hopscotch insert found no free slot in range; the table needs a resize");
  }
  // Every slot from home up to the free one is occupied, so each candidate below holds a key.
  while (distance >= neighbourhood_) {
    const size_t free = (home + distance) % n;
    size_t back = neighbourhood_ - 1;
    for (; back > 0; --back) {
      const size_t from = (free + n - back) % n;
      if (RingDistance(HomeSlot(slots_[from].key), free, n) < neighbourhood_) break;
    }
    if (back == 0) {
      return absl::ResourceExhaustedError("hopscotch insert cannot hop a free slot into the neighbourhood; "
                                          "the table needs a resize");
    }
    const size_t from = (free + n - back) % n;
    slots_[free] = slots_[from];  // copy first, then clear: the key is never absent
    slots_[from] = Slot{};
    ++moves_;
    distance -= back;
  }
  slots_[(home + distance) % n] = Slot{key, true};
  ++size_;
  return absl::OkStatus();
}

}  // namespace fathom::kv::study
