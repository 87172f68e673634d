// Elle's list-append inference (internal to //tests/history): from the reads of committed transactions,
// each key's version order; from it, the anomalies visible without a cycle search, and the dependency
// graph (ww, wr, rw and realtime edges) for the cycle search.
#ifndef FATHOM_TESTS_HISTORY_INFER_H_
#define FATHOM_TESTS_HISTORY_INFER_H_

#include <vector>

#include "tests/history/anomaly.h"
#include "tests/history/graph.h"
#include "tests/history/types.h"

namespace fathom::history {

struct Inference {
  std::vector<Anomaly> anomalies;  // incompatible-order, duplicate-elements, garbage-read, internal, G1a, G1b
  DependencyGraph graph;           // finalized; one node per transaction id
};

// `realtime`: add realtime edges (strict serializability) besides ww, wr and rw.
Inference Infer(const History& history, bool realtime);

// "[1 2 3]", or "[1 2 ... 9 10] (10 values)" when long.
std::string FormatList(const std::vector<int64_t>& list);

}  // namespace fathom::history

#endif  // FATHOM_TESTS_HISTORY_INFER_H_
