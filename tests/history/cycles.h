// Cycle search over the dependency graph (internal to //tests/history): Tarjan's strongly connected
// components, then in each component one short cycle of the weakest class it holds.
#ifndef FATHOM_TESTS_HISTORY_CYCLES_H_
#define FATHOM_TESTS_HISTORY_CYCLES_H_

#include <cstdint>
#include <vector>

#include "tests/history/graph.h"

namespace fathom::history {

// nodes[i] -> nodes[i + 1] is an edge of kinds[i]; the last node's edge goes back to nodes[0].
struct Cycle {
  std::vector<int> nodes;
  std::vector<EdgeKind> kinds;
  // False when the search for a cycle with a single rw edge ran out of steps, so a weaker cycle than
  // this one may exist in the same component.
  bool exhaustive = true;
};

struct CycleSearchOptions {
  bool realtime = true;  // use realtime edges (strict serializability)
  // Edge visits allowed to the single-rw-edge search in one component. It is the one search that is not
  // linear (a breadth-first search per rw target); other searches are always complete.
  int64_t max_steps = 50'000'000;
};

// The strongly connected components of two or more nodes, using only edges of a kind in `mask`. Each
// component's nodes are in ascending order; components ordered by their smallest node.
std::vector<std::vector<int>> StronglyConnectedComponents(const DependencyGraph& graph, uint8_t mask);

// One cycle per strongly connected component of the graph (all edge kinds, less realtime when
// options.realtime is false): the first found of, in order, only ww edges; ww and wr; ww and wr plus one
// rw; ww, wr and rw; then the same four with realtime edges allowed. Within a class, a short cycle.
std::vector<Cycle> FindCycles(const DependencyGraph& graph, const CycleSearchOptions& options);

}  // namespace fathom::history

#endif  // FATHOM_TESTS_HISTORY_CYCLES_H_
