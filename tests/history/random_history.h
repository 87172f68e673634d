// Random list-append workloads for tests: a serial execution whose transactions overlap in real time.
// Each transaction takes effect at one point between its invoke and its completion, in serial order, so
// the history is strictly serializable by construction and the checker must find nothing in it.
#ifndef FATHOM_TESTS_HISTORY_RANDOM_HISTORY_H_
#define FATHOM_TESTS_HISTORY_RANDOM_HISTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tests/history/types.h"

namespace fathom::history::testing {

struct RandomHistoryOptions {
  int txns = 50;
  int keys = 5;
  int processes = 4;
  int max_ops = 4;                 // micro-ops per transaction, 1..max_ops
  double fail_probability = 0.05;  // a transaction fails (no effect)
  double info_probability = 0.05;  // its outcome is unknown (took effect or not, at random)
};

// The events of a random history, in line order; the same seed gives the same history.
std::vector<Event> RandomHistory(uint64_t seed, const RandomHistoryOptions& options);

// The events as a history file.
std::string ToText(const std::vector<Event>& events);

}  // namespace fathom::history::testing

#endif  // FATHOM_TESTS_HISTORY_RANDOM_HISTORY_H_
