// Linear probing over a ring of slots, for the probe study (docs/kv-probes.md).
//
// A key's home slot is SeededHash(key) reduced onto the table; it lives in the first free slot at or after
// its home (wrapping). A lookup reads one slot per probe, from the home slot on, until it finds the key or
// an empty slot: a hit costs (distance from home to the key's slot) + 1 probes.
//
//   LinearProbingTable table(/*capacity=*/1 << 20, /*seed=*/1);
//   RETURN_IF_ERROR(table.Insert(key));
//   LookupResult r = table.Lookup(key);   // r.found, r.probes
#ifndef FATHOM_KV_STUDY_LINEAR_PROBING_TABLE_H_
#define FATHOM_KV_STUDY_LINEAR_PROBING_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "kv/study/table_common.h"

namespace fathom::kv::study {

class LinearProbingTable {
 public:
  // `capacity` > 0 slots; `seed` picks the hash function.
  LinearProbingTable(size_t capacity, uint64_t seed);

  // OK; AlreadyExists if the key is stored; ResourceExhausted when every slot is taken (the table needs a
  // resize). Linear probing never fails below a full table.
  absl::Status Insert(uint64_t key);
  LookupResult Lookup(uint64_t key) const;

  size_t HomeSlot(uint64_t key) const;
  const Slot& slot(size_t index) const { return slots_[index]; }
  size_t capacity() const { return slots_.size(); }
  size_t size() const { return size_; }

 private:
  const uint64_t hash_seed_;
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace fathom::kv::study

#endif  // FATHOM_KV_STUDY_LINEAR_PROBING_TABLE_H_
