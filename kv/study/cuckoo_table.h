// 3-way cuckoo hashing (Pilaf), for the probe study (docs/kv-probes.md).
//
// Each key has kWays candidate slots, one per hash function (XXH3 under three derived seeds), in a fixed
// order. A lookup reads the candidates in that order until it finds the key: a hit costs the index (1..3) of
// the candidate holding it, a miss costs every distinct candidate. Candidates that coincide are read once.
//
// Insert puts the key in its first free candidate. When all are taken it searches breadth-first for the
// shortest displacement path: from a candidate slot, the key there may move to one of its own other
// candidates, and so on, until a free slot is reached. At most `max_search_slots` occupied slots enter the
// search; when it finds no free slot the insert fails with ResourceExhausted (the table needs a
// resize) and the table is unchanged. Moves run from the free end of the path back to the new key, each key
// copied to its new slot before its old slot is overwritten, so no key is ever absent from all its
// candidates (DESIGN.md, kv).
//
//   CuckooTable table(/*capacity=*/1 << 20, /*seed=*/1);
//   RETURN_IF_ERROR(table.Insert(key));
//   LookupResult r = table.Lookup(key);   // r.probes in 1..3
#ifndef FATHOM_KV_STUDY_CUCKOO_TABLE_H_
#define FATHOM_KV_STUDY_CUCKOO_TABLE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "kv/study/table_common.h"

namespace fathom::kv::study {

struct CuckooOptions {
  // Occupied slots the breadth-first displacement search may take in before the insert gives up.
  int max_search_slots = 500;
};

class CuckooTable {
 public:
  static constexpr int kWays = 3;

  // `capacity` > 0 slots; `seed` derives the kWays hash seeds.
  CuckooTable(size_t capacity, uint64_t seed, CuckooOptions options = {});

  // OK; AlreadyExists if the key is stored; ResourceExhausted when no displacement path was found.
  absl::Status Insert(uint64_t key);
  LookupResult Lookup(uint64_t key) const;

  // The key's candidate slots, in lookup order (they may coincide).
  std::array<size_t, kWays> Candidates(uint64_t key) const;
  const Slot& slot(size_t index) const { return slots_[index]; }
  size_t capacity() const { return slots_.size(); }
  size_t size() const { return size_; }
  // Keys moved by displacements so far.
  uint64_t moves() const { return moves_; }

  // Called after every single key move of a displacement (tests check no key is lost in between).
  void set_move_observer(std::function<void()> observer) { move_observer_ = std::move(observer); }

 private:
  // Fills `path` with the slots of a displacement path: path[0] is one of `key`'s candidates, each next
  // slot a candidate of the key in the slot before it, the last slot free. False if none was found.
  bool FindPath(const std::array<size_t, kWays>& roots, std::vector<size_t>& path) const;

  const CuckooOptions options_;
  std::array<uint64_t, kWays> hash_seeds_;
  std::vector<Slot> slots_;
  size_t size_ = 0;
  uint64_t moves_ = 0;
  std::function<void()> move_observer_;
};

}  // namespace fathom::kv::study

#endif  // FATHOM_KV_STUDY_CUCKOO_TABLE_H_
