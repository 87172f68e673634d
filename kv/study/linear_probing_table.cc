#include "kv/study/linear_probing_table.h"

namespace fathom::kv::study {

LinearProbingTable::LinearProbingTable(size_t capacity, uint64_t seed)
    : hash_seed_(DeriveSeed(seed, 0)), slots_(capacity) {}

size_t LinearProbingTable::HomeSlot(uint64_t key) const {
  return ReduceToRange(SeededHash(key, hash_seed_), slots_.size());
}

absl::Status LinearProbingTable::Insert(uint64_t key) {
  const size_t n = slots_.size();
  size_t index = HomeSlot(key);
  for (size_t probed = 0; probed < n; ++probed) {
    Slot& slot = slots_[index];
    if (!slot.occupied) {
      slot = Slot{key, true};
      ++size_;
      return absl::OkStatus();
    }
    if (slot.key == key) return absl::AlreadyExistsError("key already in the table");
    if (++index == n) index = 0;
  }
  return absl::ResourceExhaustedError("linear probing table is full");
}

LookupResult LinearProbingTable::Lookup(uint64_t key) const {
  const size_t n = slots_.size();
  size_t index = HomeSlot(key);
  LookupResult result;
  while (static_cast<size_t>(result.probes) < n) {
    const Slot& slot = slots_[index];
    ++result.probes;
    if (!slot.occupied) return result;
    if (slot.key == key) {
      result.found = true;
      return result;
    }
    if (++index == n) index = 0;
  }
  return result;  // a full table without the key: every slot was read
}

}  // namespace fathom::kv::study
