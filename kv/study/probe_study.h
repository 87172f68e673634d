// The probe study behind docs/kv-probes.md (Pilaf figure 6 as a table): fill a table of each scheme to a
// target fill ratio, look every stored key up once, and report probes per lookup and failed inserts.
//
//   const std::vector<uint64_t> keys = StudyKeys(1'000'000, /*seed=*/1);
//   StudyRow row = RunStudy(Scheme::kCuckoo3Way, /*fill=*/0.75, keys, StudyOptions{});
//   std::cout << FormatResultTable({row});
#ifndef FATHOM_KV_STUDY_PROBE_STUDY_H_
#define FATHOM_KV_STUDY_PROBE_STUDY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kv/study/cuckoo_table.h"
#include "kv/study/hopscotch_table.h"
#include "kv/study/table_common.h"

namespace fathom::kv::study {

enum class Scheme { kCuckoo3Way, kHopscotch, kLinearProbing };
inline constexpr Scheme kAllSchemes[] = {Scheme::kCuckoo3Way, Scheme::kHopscotch, Scheme::kLinearProbing};
std::string SchemeName(Scheme scheme);

// Probes per lookup over a set of lookups.
struct ProbeStats {
  uint64_t lookups = 0;
  uint64_t total_probes = 0;
  int max_probes = 0;
  uint64_t one_read = 0;   // lookups that cost exactly one probe
  uint64_t not_found = 0;  // lookups that missed

  void Add(const LookupResult& result);
  double average() const { return lookups == 0 ? 0 : static_cast<double>(total_probes) / lookups; }
  double one_read_fraction() const { return lookups == 0 ? 0 : static_cast<double>(one_read) / lookups; }
};

struct StudyOptions {
  uint64_t seed = 1;  // hash functions; StudyKeys takes its own
  CuckooOptions cuckoo;
  HopscotchOptions hopscotch;
};

struct StudyRow {
  Scheme scheme = Scheme::kCuckoo3Way;
  double fill = 0;        // target: keys / capacity
  size_t capacity = 0;    // slots
  uint64_t attempted = 0; // inserts tried (every key once)
  uint64_t failed_inserts = 0;
  uint64_t moves = 0;     // keys displaced by inserts (cuckoo, hopscotch)
  ProbeStats probes;      // one lookup of every stored key; probes.not_found > 0 means a lost key
};

// `count` distinct keys (a bijective mix of a seeded counter), in insertion order.
std::vector<uint64_t> StudyKeys(size_t count, uint64_t seed);

// Builds a table of capacity round(keys.size() / fill) slots (0 < fill <= 1), inserts every key once,
// counting failures, then looks up every key that went in.
StudyRow RunStudy(Scheme scheme, double fill, const std::vector<uint64_t>& keys, const StudyOptions& options);

// Markdown: scheme | fill | avg probes | max probes | one-read lookups | failed inserts.
std::string FormatResultTable(const std::vector<StudyRow>& rows);
// Markdown, figure 6's shape: one row per fill, one column of average probes per scheme.
std::string FormatAverageByFill(const std::vector<StudyRow>& rows);

}  // namespace fathom::kv::study

#endif  // FATHOM_KV_STUDY_PROBE_STUDY_H_
