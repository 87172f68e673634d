// Randomized: serial executions emitted as concurrent histories must check clean; one read changed so
// that no serial order respecting real time explains it must be flagged.
//
// Seeds are fixed so CI is deterministic; FATHOM_HISTORY_SEED=<n> runs another set. A failure prints
// its seed.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "tests/history/check.h"
#include "tests/history/parse.h"
#include "tests/history/random_history.h"

namespace fathom::history {
namespace {

using ::fathom::history::testing::RandomHistory;
using ::fathom::history::testing::RandomHistoryOptions;
using ::fathom::history::testing::ToText;

uint64_t BaseSeed() {
  uint64_t seed = 1;
  const char* env = std::getenv("FATHOM_HISTORY_SEED");
  if (env != nullptr && !absl::SimpleAtoi(env, &seed)) seed = 1;
  std::cout << "base seed " << seed << " (set FATHOM_HISTORY_SEED to change)" << std::endl;
  return seed;
}

// A read of an ok transaction, located in both the parsed history and the event list.
struct ReadSite {
  int reader;  // txn id
  int event;   // index of the reader's ok completion in the events
  int op;      // micro-op index
};

class Mutator {
 public:
  explicit Mutator(const History& history) : history_(history) {
    for (const Txn& t : history.txns) {
      for (const MicroOp& op : t.ops) {
        if (op.kind == MicroOp::Kind::kAppend) writer_[{op.key, op.value}] = t.id;
      }
    }
  }

  // T1 -> T2 in real time, both ok.
  bool Precedes(int t1, int t2) const {
    const Txn& a = history_.txns[t1];
    const Txn& b = history_.txns[t2];
    return a.outcome == EventType::kOk && b.outcome == EventType::kOk && a.complete_line < b.invoke_line;
  }
  int Writer(int64_t key, int64_t value) const { return writer_.at({key, value}); }

  // Reads whose last value was appended by a transaction that finished before the reader began: without
  // that value, the reader must come before the writer, and real time says the opposite.
  std::vector<ReadSite> DroppableReads() const {
    std::vector<ReadSite> sites;
    ForEachRead([&](const Txn& t, int i, const std::vector<int64_t>& list) {
      if (!list.empty() && Precedes(Writer(t.ops[i].key, list.back()), t.id)) sites.push_back({t.id, t.complete_line - 1, i});
    });
    return sites;
  }

  // Reads with adjacent values from two transactions ordered in real time: swapped, they contradict it.
  std::vector<std::pair<ReadSite, int>> SwappableReads() const {
    std::vector<std::pair<ReadSite, int>> sites;
    ForEachRead([&](const Txn& t, int i, const std::vector<int64_t>& list) {
      for (size_t j = 0; j + 1 < list.size(); ++j) {
        if (Precedes(Writer(t.ops[i].key, list[j]), Writer(t.ops[i].key, list[j + 1]))) {
          sites.push_back({{t.id, t.complete_line - 1, i}, static_cast<int>(j)});
        }
      }
    });
    return sites;
  }

 private:
  template <typename F>
  void ForEachRead(F f) const {
    for (const Txn& t : history_.txns) {
      if (t.outcome != EventType::kOk) continue;
      for (size_t i = 0; i < t.ops.size(); ++i) {
        if (t.ops[i].kind == MicroOp::Kind::kRead) f(t, static_cast<int>(i), *t.ops[i].result);
      }
    }
  }

  const History& history_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int> writer_;
};

TEST(RandomHistoryTest, SameSeedSameHistory) {
  EXPECT_EQ(ToText(RandomHistory(7, {})), ToText(RandomHistory(7, {})));
  EXPECT_NE(ToText(RandomHistory(7, {})), ToText(RandomHistory(8, {})));
}

TEST(RandomHistoryTest, SerialExecutionsPassAndMutatedReadsAreFlagged) {
  const uint64_t base = BaseSeed();
  int dropped = 0, swapped = 0;
  absl::btree_map<std::string, int> found;  // what the mutations were reported as, for the log
  auto tally = [&found](const char* mutation, const CheckResult& result) {
    for (const Anomaly& a : result.anomalies) ++found[absl::StrCat(mutation, " ", AnomalyName(a.type))];
  };
  for (uint64_t seed = base; seed < base + 300; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    RandomHistoryOptions options;
    options.txns = 20 + static_cast<int>(seed % 60);
    options.keys = 2 + static_cast<int>(seed % 6);
    options.processes = 1 + static_cast<int>(seed % 6);
    const std::vector<Event> events = RandomHistory(seed, options);
    ASSERT_OK_AND_ASSIGN(History history, ParseHistory(ToText(events)));
    const CheckResult clean = CheckHistory(history);
    ASSERT_TRUE(clean.valid()) << clean.ToString() << "\n" << ToText(events);

    Mutator mutator(history);
    const std::vector<ReadSite> droppable = mutator.DroppableReads();
    if (!droppable.empty()) {
      const ReadSite& site = droppable[seed % droppable.size()];
      std::vector<Event> bad = events;
      bad[site.event].ops[site.op].result->pop_back();
      ASSERT_OK_AND_ASSIGN(History mutated, ParseHistory(ToText(bad)));
      const CheckResult result = CheckHistory(mutated);
      EXPECT_FALSE(result.valid()) << "dropped the last value of T" << site.reader << "'s read\n" << ToText(bad);
      tally("dropped:", result);
      ++dropped;
    }
    const auto swappable = mutator.SwappableReads();
    if (!swappable.empty()) {
      const auto& [site, j] = swappable[seed % swappable.size()];
      std::vector<Event> bad = events;
      std::vector<int64_t>& list = *bad[site.event].ops[site.op].result;
      std::swap(list[j], list[j + 1]);
      ASSERT_OK_AND_ASSIGN(History mutated, ParseHistory(ToText(bad)));
      const CheckResult result = CheckHistory(mutated);
      EXPECT_FALSE(result.valid()) << "swapped values " << j << " and " << j + 1 << " of T" << site.reader
                                   << "'s read\n" << ToText(bad);
      tally("swapped:", result);
      ++swapped;
    }
  }
  // The mutations must actually have been exercised.
  EXPECT_GT(dropped, 200);
  EXPECT_GT(swapped, 100);
  std::cout << dropped << " histories with a dropped value, " << swapped << " with swapped values" << std::endl;
  for (const auto& [what, count] : found) std::cout << "  " << what << ": " << count << std::endl;
}

// A stale read (the dropped-value mutation) is serializable: checking serializability only must not
// flag it when that is all that changed... unless the change also contradicts other reads, so only the
// clean histories are checked here.
TEST(RandomHistoryTest, SerialExecutionsPassWithoutRealtime) {
  CheckOptions options;
  options.realtime = false;
  for (uint64_t seed = 1000; seed < 1050; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    ASSERT_OK_AND_ASSIGN(History history, ParseHistory(ToText(RandomHistory(seed, {}))));
    EXPECT_TRUE(CheckHistory(history, options).valid());
  }
}

// A history the size of a real workload run checks in reasonable time (not a benchmark: a guard against
// accidentally quadratic inference).
TEST(RandomHistoryTest, LargeHistory) {
  RandomHistoryOptions options;
  options.txns = 20000;
  options.keys = 50;
  options.processes = 16;
  options.max_ops = 6;
  const std::vector<Event> events = RandomHistory(42, options);
  ASSERT_OK_AND_ASSIGN(History history, ParseHistory(ToText(events)));
  const absl::Time start = absl::Now();
  const CheckResult result = CheckHistory(history);
  std::cout << history.txns.size() << " transactions checked in " << absl::Now() - start << std::endl;
  EXPECT_TRUE(result.valid()) << result.ToString();
}

}  // namespace
}  // namespace fathom::history
