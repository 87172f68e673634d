// Pieces shared by the probe-study tables (kv/study): the slot layout, seeded hashing, and what a lookup
// reports. The study tables are plain in-memory arrays of 64-bit keys; they model how many one-sided reads
// a remote lookup needs (Pilaf figure 6), not the kv layer's object layout.
//
//   const uint64_t h = SeededHash(key, DeriveSeed(seed, 0));
//   const size_t home = ReduceToRange(h, capacity);
#ifndef FATHOM_KV_STUDY_TABLE_COMMON_H_
#define FATHOM_KV_STUDY_TABLE_COMMON_H_

#include <cstddef>
#include <cstdint>

namespace fathom::kv::study {

// One slot of a table: a key, or nothing.
struct Slot {
  uint64_t key = 0;
  bool occupied = false;
};

// What a lookup found and what it cost. `probes` is the number of reads of the table the lookup issued
// (each scheme's header says what one read covers); it is counted for misses too.
struct LookupResult {
  bool found = false;
  int probes = 0;
};

// XXH3-64 of the key's 8 bytes under `seed`.
uint64_t SeededHash(uint64_t key, uint64_t seed);

// An independent-looking seed per (base seed, index): one per hash function, one per key stream.
uint64_t DeriveSeed(uint64_t base_seed, uint64_t index);

// Maps a 64-bit hash uniformly onto [0, n) with a multiply and a shift (no division). n > 0.
inline size_t ReduceToRange(uint64_t hash, size_t n) {
  return static_cast<size_t>((static_cast<unsigned __int128>(hash) * n) >> 64);
}

// Forward distance from slot `from` to slot `to` in a ring of `n` slots: 0 when equal.
inline size_t RingDistance(size_t from, size_t to, size_t n) { return to >= from ? to - from : to + n - from; }

}  // namespace fathom::kv::study

#endif  // FATHOM_KV_STUDY_TABLE_COMMON_H_
