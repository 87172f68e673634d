#include "tests/history/cycles.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace fathom::history {
namespace {

// Of the kinds one edge carries, the one that makes a cycle's class weakest: an rw edge is what
// separates G-single and G2 from G1c, and a realtime edge is weaker than rw because it adds no
// anti-dependency (it only turns the class into its -realtime form).
EdgeKind Weakest(uint8_t kinds) {
  for (EdgeKind k : {kWW, kWR, kRealtime, kRW}) {
    if (kinds & k) return k;
  }
  return kWW;
}

// Scratch arrays sized to the graph, reused across searches; stamps mark membership so that nothing is
// cleared between searches (a history can have many components).
class Searcher {
 public:
  explicit Searcher(const DependencyGraph& graph)
      : graph_(graph),
        scope_mark_(graph.nodes(), 0),
        index_(graph.nodes(), -1),
        low_(graph.nodes(), 0),
        on_stack_(graph.nodes(), false),
        seen_mark_(graph.nodes(), 0),
        parent_(graph.nodes(), -1),
        goal_mark_(graph.nodes(), 0) {}

  // Later searches see only `nodes` and the edges among them.
  void SetScope(const std::vector<int>& nodes) {
    ++scope_;
    for (int n : nodes) scope_mark_[n] = scope_;
    scope_nodes_ = nodes;
  }

  // Tarjan's algorithm, iterative so that a long chain of transactions cannot overflow the stack.
  std::vector<std::vector<int>> Components(uint8_t mask) {
    std::vector<std::vector<int>> components;
    for (int n : scope_nodes_) index_[n] = -1;
    int counter = 0;
    std::vector<int> stack;
    std::vector<std::pair<int, size_t>> calls;  // node, next out-edge to look at
    for (int root : scope_nodes_) {
      if (index_[root] != -1) continue;
      Visit(root, &counter, &stack, &calls);
      while (!calls.empty()) {
        const int v = calls.back().first;
        const absl::Span<const DependencyGraph::Out> edges = graph_.OutEdges(v);
        if (calls.back().second < edges.size()) {
          const DependencyGraph::Out& e = edges[calls.back().second++];
          if (!(e.kinds & mask) || !InScope(e.to)) continue;
          if (index_[e.to] == -1) {
            Visit(e.to, &counter, &stack, &calls);
          } else if (on_stack_[e.to]) {
            low_[v] = std::min(low_[v], index_[e.to]);
          }
          continue;
        }
        calls.pop_back();
        if (!calls.empty()) low_[calls.back().first] = std::min(low_[calls.back().first], low_[v]);
        if (low_[v] != index_[v]) continue;
        std::vector<int> component;
        int w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack_[w] = false;
          component.push_back(w);
        } while (w != v);
        if (component.size() < 2) continue;  // there are no self edges
        std::sort(component.begin(), component.end());
        components.push_back(std::move(component));
      }
    }
    std::sort(components.begin(), components.end());
    return components;
  }

  // The shortest cycle through `start` of `mask` edges, or an empty cycle.
  Cycle ShortestCycleThrough(int start, uint8_t mask) {
    int64_t steps = 0;
    std::vector<int> path = Bfs(start, mask, [start](int n) { return n == start; }, &steps, -1);
    Cycle cycle;
    if (path.empty()) return cycle;
    path.pop_back();  // the walk came back to `start`
    cycle.nodes = std::move(path);
    FillKinds(mask, &cycle, 0);
    return cycle;
  }

  // A cycle of one rw edge u -> v closed by a path v -> ... -> u of `mask` edges. Sets *exhausted when the
  // search ran out of steps first.
  std::optional<Cycle> OneRwCycle(uint8_t mask, int64_t max_steps, bool* exhausted) {
    std::vector<std::pair<int, int>> rw;  // (v, u) for each rw edge u -> v in scope
    for (int u : scope_nodes_) {
      for (const DependencyGraph::Out& e : graph_.OutEdges(u)) {
        if ((e.kinds & kRW) && InScope(e.to)) rw.emplace_back(e.to, u);
      }
    }
    std::sort(rw.begin(), rw.end());
    int64_t steps = 0;
    for (size_t i = 0; i < rw.size();) {
      const int v = rw[i].first;
      ++goal_;
      for (; i < rw.size() && rw[i].first == v; ++i) goal_mark_[rw[i].second] = goal_;
      std::vector<int> path = Bfs(v, mask, [this](int n) { return goal_mark_[n] == goal_; }, &steps, max_steps);
      if (steps > max_steps) {
        *exhausted = true;
        return std::nullopt;
      }
      if (path.empty()) continue;
      Cycle cycle;
      cycle.nodes.push_back(path.back());  // u
      path.pop_back();
      cycle.nodes.insert(cycle.nodes.end(), path.begin(), path.end());
      cycle.kinds.push_back(kRW);
      FillKinds(mask, &cycle, 1);
      return cycle;
    }
    return std::nullopt;
  }

 private:
  bool InScope(int n) const { return scope_mark_[n] == scope_; }

  void Visit(int n, int* counter, std::vector<int>* stack, std::vector<std::pair<int, size_t>>* calls) {
    index_[n] = low_[n] = (*counter)++;
    stack->push_back(n);
    on_stack_[n] = true;
    calls->emplace_back(n, 0);
  }

  // Breadth-first from `start` over `mask` edges in scope, until an edge reaches a node where is_goal
  // holds. Returns start, ..., goal; empty if no goal is reachable or `*steps` passed max_steps (-1: no
  // limit).
  template <typename Goal>
  std::vector<int> Bfs(int start, uint8_t mask, Goal is_goal, int64_t* steps, int64_t max_steps) {
    ++seen_;
    seen_mark_[start] = seen_;
    parent_[start] = -1;
    std::vector<int> queue = {start};
    for (size_t head = 0; head < queue.size(); ++head) {
      const int x = queue[head];
      for (const DependencyGraph::Out& e : graph_.OutEdges(x)) {
        if (max_steps >= 0 && ++*steps > max_steps) return {};
        if (!(e.kinds & mask) || !InScope(e.to)) continue;
        if (is_goal(e.to)) {
          std::vector<int> path = {e.to};
          for (int n = x; n != -1; n = parent_[n]) path.push_back(n);
          std::reverse(path.begin(), path.end());
          return path;
        }
        if (seen_mark_[e.to] == seen_) continue;
        seen_mark_[e.to] = seen_;
        parent_[e.to] = x;
        queue.push_back(e.to);
      }
    }
    return {};
  }

  // The kinds of the cycle's edges from position `from` on, each the weakest the edge carries in `mask`.
  void FillKinds(uint8_t mask, Cycle* cycle, size_t from) const {
    const size_t n = cycle->nodes.size();
    for (size_t i = from; i < n; ++i) {
      const int a = cycle->nodes[i];
      const int b = cycle->nodes[(i + 1) % n];
      uint8_t kinds = 0;
      for (const DependencyGraph::Out& e : graph_.OutEdges(a)) {
        if (e.to == b) kinds = e.kinds & mask;
      }
      cycle->kinds.push_back(Weakest(kinds));
    }
  }

  const DependencyGraph& graph_;
  std::vector<int> scope_nodes_;
  std::vector<int> scope_mark_;
  int scope_ = 0;
  std::vector<int> index_;
  std::vector<int> low_;
  std::vector<bool> on_stack_;
  std::vector<int> seen_mark_;
  int seen_ = 0;
  std::vector<int> parent_;
  std::vector<int> goal_mark_;
  int goal_ = 0;
};

struct Level {
  uint8_t mask;
  bool one_rw;  // exactly one rw edge, the rest from `mask`
};

std::vector<int> AllNodes(const DependencyGraph& graph) {
  std::vector<int> nodes(graph.nodes());
  for (int i = 0; i < graph.nodes(); ++i) nodes[i] = i;
  return nodes;
}

}  // namespace

std::vector<std::vector<int>> StronglyConnectedComponents(const DependencyGraph& graph, uint8_t mask) {
  Searcher searcher(graph);
  searcher.SetScope(AllNodes(graph));
  return searcher.Components(mask);
}

std::vector<Cycle> FindCycles(const DependencyGraph& graph, const CycleSearchOptions& options) {
  static constexpr Level kLevels[] = {
      {kWW, false},                     // G0
      {kWW | kWR, false},               // G1c
      {kWW | kWR, true},                // G-single
      {kWW | kWR | kRW, false},         // G2
      {kWW | kRealtime, false},         // G0-realtime
      {kWW | kWR | kRealtime, false},   // G1c-realtime
      {kWW | kWR | kRealtime, true},    // G-single-realtime
      {kAllEdgeKinds, false},           // G2-realtime
  };
  const int levels = options.realtime ? 8 : 4;
  const uint8_t all = options.realtime ? kAllEdgeKinds : (kWW | kWR | kRW);

  std::vector<Cycle> cycles;
  Searcher searcher(graph);
  searcher.SetScope(AllNodes(graph));
  for (const std::vector<int>& component : searcher.Components(all)) {
    searcher.SetScope(component);
    bool exhaustive = true;
    for (int l = 0; l < levels; ++l) {
      const Level& level = kLevels[l];
      std::optional<Cycle> found;
      if (level.one_rw) {
        bool exhausted = false;
        found = searcher.OneRwCycle(level.mask, options.max_steps, &exhausted);
        if (exhausted) exhaustive = false;
      } else {
        std::vector<std::vector<int>> inner = searcher.Components(level.mask);
        if (inner.empty()) continue;
        // Breadth-first search finds the shortest cycle through a node; trying a few nodes finds a
        // shorter one often enough to be worth it, and keeps reports readable.
        const std::vector<int>& nodes = inner.front();
        for (size_t i = 0; i < nodes.size() && i < 4; ++i) {
          Cycle c = searcher.ShortestCycleThrough(nodes[i], level.mask);
          if (!c.nodes.empty() && (!found || c.nodes.size() < found->nodes.size())) found = std::move(c);
        }
      }
      if (!found) continue;
      found->exhaustive = exhaustive;
      cycles.push_back(std::move(*found));
      break;
    }
  }
  return cycles;
}

}  // namespace fathom::history
