#include "kv/study/probe_study.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kv/study/linear_probing_table.h"

namespace fathom::kv::study {
namespace {

// SplitMix64's finaliser: a bijection on 64-bit words.
uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <typename Table>
uint64_t MovesOf(const Table& table) {
  if constexpr (requires { table.moves(); }) {
    return table.moves();
  } else {
    return 0;
  }
}

template <typename Table>
StudyRow Fill(Table& table, const std::vector<uint64_t>& keys) {
  StudyRow row;
  row.capacity = table.capacity();
  row.attempted = keys.size();
  std::vector<bool> stored(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    stored[i] = table.Insert(keys[i]).ok();
    if (!stored[i]) ++row.failed_inserts;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    if (stored[i]) row.probes.Add(table.Lookup(keys[i]));
  }
  row.moves = MovesOf(table);
  return row;
}

std::string Percent(double fraction, int decimals) { return absl::StrFormat("%.*f%%", decimals, 100 * fraction); }

}  // namespace

std::string SchemeName(Scheme scheme) {
  switch (scheme) {
    case Scheme::kCuckoo3Way:
      return "3-way cuckoo";
    case Scheme::kHopscotch:
      return "hopscotch (H = 8)";
    case Scheme::kLinearProbing:
      return "linear probing";
  }
  return "?";
}

void ProbeStats::Add(const LookupResult& result) {
  ++lookups;
  total_probes += result.probes;
  max_probes = std::max(max_probes, result.probes);
  if (result.probes == 1) ++one_read;
  if (!result.found) ++not_found;
}

std::vector<uint64_t> StudyKeys(size_t count, uint64_t seed) {
  const uint64_t offset = DeriveSeed(seed, 0x6b657973);  // "keys"
  std::vector<uint64_t> keys(count);
  for (size_t i = 0; i < count; ++i) keys[i] = Mix64(offset + i);
  return keys;
}

StudyRow RunStudy(Scheme scheme, double fill, const std::vector<uint64_t>& keys, const StudyOptions& options) {
  const size_t capacity = std::max<size_t>(1, std::llround(static_cast<double>(keys.size()) / fill));
  StudyRow row;
  switch (scheme) {
    case Scheme::kCuckoo3Way: {
      CuckooTable table(capacity, options.seed, options.cuckoo);
      row = Fill(table, keys);
      break;
    }
    case Scheme::kHopscotch: {
      HopscotchTable table(capacity, options.seed, options.hopscotch);
      row = Fill(table, keys);
      break;
    }
    case Scheme::kLinearProbing: {
      LinearProbingTable table(capacity, options.seed);
      row = Fill(table, keys);
      break;
    }
  }
  row.scheme = scheme;
  row.fill = fill;
  return row;
}

std::string FormatResultTable(const std::vector<StudyRow>& rows) {
  std::string out =
      "| scheme | fill | avg probes | max probes | one-read lookups | failed inserts |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (const StudyRow& row : rows) {
    const std::string failed =
        row.failed_inserts == 0
            ? "0"
            : absl::StrCat(row.failed_inserts, " (",
                           Percent(static_cast<double>(row.failed_inserts) / row.attempted, 2), ")");
    absl::StrAppendFormat(&out, "| %s | %s | %.3f | %d | %s | %s |\n", SchemeName(row.scheme),
                          Percent(row.fill, 0), row.probes.average(), row.probes.max_probes,
                          Percent(row.probes.one_read_fraction(), 1), failed);
  }
  return out;
}

std::string FormatAverageByFill(const std::vector<StudyRow>& rows) {
  std::vector<Scheme> schemes;
  std::map<double, std::map<Scheme, double>> by_fill;
  for (const StudyRow& row : rows) {
    if (std::find(schemes.begin(), schemes.end(), row.scheme) == schemes.end()) schemes.push_back(row.scheme);
    by_fill[row.fill][row.scheme] = row.probes.average();
  }
  std::string out = "| fill |";
  std::string rule = "| ---: |";
  for (Scheme scheme : schemes) {
    absl::StrAppend(&out, " ", SchemeName(scheme), " |");
    absl::StrAppend(&rule, " ---: |");
  }
  absl::StrAppend(&out, "\n", rule, "\n");
  for (const auto& [fill, averages] : by_fill) {
    absl::StrAppend(&out, "| ", Percent(fill, 0), " |");
    for (Scheme scheme : schemes) {
      const auto it = averages.find(scheme);
      absl::StrAppend(&out, " ", it == averages.end() ? "" : absl::StrFormat("%.3f", it->second), " |");
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace fathom::kv::study
