// probe_study: Pilaf's figure 6 as a table (docs/kv-probes.md). For each scheme (3-way cuckoo, hopscotch
// with H = 8, linear probing) and fill ratio (10%..90%, 75%, 95%), inserts --keys keys into a table of
// keys / fill slots, looks each stored key up once, and prints Markdown tables of probes per lookup and
// failed inserts.
//
//   bazel run -c opt //kv/study:probe_study -- --seed=1
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "kv/study/probe_study.h"

ABSL_FLAG(uint64_t, seed, 1, "Seed of the key stream and of every hash function.");
ABSL_FLAG(uint64_t, keys, 1'000'000, "Keys inserted per table; capacity = keys / fill.");
ABSL_FLAG(int, cuckoo_max_search_slots, 500,
          "Occupied slots a cuckoo insert's breadth-first displacement search may take in before it fails.");
ABSL_FLAG(int, hopscotch_max_probe_distance, 512,
          "How far from its home slot a hopscotch insert looks for a free slot before it fails.");

namespace fathom::kv::study {
namespace {

constexpr double kFills[] = {0.10, 0.20, 0.30, 0.40, 0.50, 0.60, 0.70, 0.75, 0.80, 0.90, 0.95};

int Run() {
  StudyOptions options;
  options.seed = absl::GetFlag(FLAGS_seed);
  options.cuckoo.max_search_slots = absl::GetFlag(FLAGS_cuckoo_max_search_slots);
  options.hopscotch.max_probe_distance = absl::GetFlag(FLAGS_hopscotch_max_probe_distance);
  const std::vector<uint64_t> keys = StudyKeys(absl::GetFlag(FLAGS_keys), options.seed);

  const auto start = std::chrono::steady_clock::now();
  std::vector<StudyRow> rows;
  uint64_t lost = 0;
  for (Scheme scheme : kAllSchemes) {
    for (double fill : kFills) {
      rows.push_back(RunStudy(scheme, fill, keys, options));
      lost += rows.back().probes.not_found;
      std::fprintf(stderr, "%s at %.0f%%: done\n", SchemeName(scheme).c_str(), 100 * fill);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::cout << absl::StrFormat("%d keys per table, seed %d, cuckoo search limit %d slots, hopscotch probe "
                               "distance %d slots.\n\n",
                               keys.size(), options.seed, options.cuckoo.max_search_slots,
                               options.hopscotch.max_probe_distance)
            << FormatResultTable(rows) << "\nAverage probes per lookup (figure 6's shape):\n\n"
            << FormatAverageByFill(rows) << absl::StrFormat("\nRan in %.1f s.\n", seconds);
  if (lost > 0) {
    std::cerr << "BUG: " << lost << " stored keys were not found\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace fathom::kv::study

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("probe_study: probes per lookup against fill ratio (see docs/kv-probes.md).");
  absl::ParseCommandLine(argc, argv);
  return fathom::kv::study::Run();
}
