// Plain hopscotch hashing (FaRM's layout without its overflow chains), for the probe study
// (docs/kv-probes.md).
//
// A key's home slot is SeededHash(key) reduced onto the table. The invariant: every key sits within its
// neighbourhood, the H consecutive slots from its home (wrapping). A lookup reads the whole neighbourhood in
// one read, so it always costs 1 probe, hit or miss.
//
// Insert takes the first free slot at most `max_probe_distance` slots from home. While that slot is outside
// the neighbourhood it hops the free slot backwards: among the H - 1 slots before it, the farthest one whose
// key may legally live in the free slot moves there. When no free slot is in range, or no key can move,
// the insert fails with ResourceExhausted (the table needs a resize); keys already hopped stay where they
// are, each still in its neighbourhood. FaRM instead chains an overflow block to the neighbourhood, so a
// lookup there may need a second read; this table does not.
//
//   HopscotchTable table(/*capacity=*/1 << 20, /*seed=*/1);
//   RETURN_IF_ERROR(table.Insert(key));
//   LookupResult r = table.Lookup(key);   // r.probes == 1
#ifndef FATHOM_KV_STUDY_HOPSCOTCH_TABLE_H_
#define FATHOM_KV_STUDY_HOPSCOTCH_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "kv/study/table_common.h"

namespace fathom::kv::study {

struct HopscotchOptions {
  int neighbourhood = 8;         // H, slots read by one lookup
  int max_probe_distance = 512;  // how far from home an insert looks for a free slot
};

class HopscotchTable {
 public:
  // `capacity` > 0 slots; `seed` picks the hash function. A table of fewer than 2 * H slots uses a
  // neighbourhood of capacity / 2 (at least 1), so a neighbourhood never wraps onto itself.
  HopscotchTable(size_t capacity, uint64_t seed, HopscotchOptions options = {});

  // OK; AlreadyExists if the key is stored; ResourceExhausted when the key cannot be brought into its
  // neighbourhood.
  absl::Status Insert(uint64_t key);
  LookupResult Lookup(uint64_t key) const;

  size_t HomeSlot(uint64_t key) const;
  const Slot& slot(size_t index) const { return slots_[index]; }
  size_t capacity() const { return slots_.size(); }
  size_t size() const { return size_; }
  size_t neighbourhood() const { return neighbourhood_; }
  // Keys hopped by inserts so far.
  uint64_t moves() const { return moves_; }

 private:
  const uint64_t hash_seed_;
  std::vector<Slot> slots_;
  const size_t neighbourhood_;
  const size_t max_probe_distance_;
  size_t size_ = 0;
  uint64_t moves_ = 0;
};

}  // namespace fathom::kv::study

#endif  // FATHOM_KV_STUDY_HOPSCOTCH_TABLE_H_
