// The dependency graph between transactions (internal to //tests/history). Nodes are transaction ids;
// an edge T1 -> T2 means T1 must come before T2 in any serial order that explains the history.
#ifndef FATHOM_TESTS_HISTORY_GRAPH_H_
#define FATHOM_TESTS_HISTORY_GRAPH_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace fathom::history {

// Bits, so one edge can carry several kinds.
enum EdgeKind : uint8_t {
  kWW = 1,        // write-write: T2 appended the next value after T1's to a key
  kWR = 2,        // write-read: T2 read a list ending in T1's append
  kRW = 4,        // read-write (anti-dependency): T1 read a list T2's append later extended
  kRealtime = 8,  // T1 completed ok before T2 was invoked
};
inline constexpr uint8_t kAllEdgeKinds = kWW | kWR | kRW | kRealtime;

// "ww", "wr", "rw", "realtime".
absl::string_view EdgeKindName(EdgeKind kind);

// Why an edge exists, for explanations. ww: T1 appended `a`, T2 appended `b`, the next value of `key`.
// wr: T2's read of `key` ended in `a`, T1's. rw: T1's read of `key` ended in `a` (nullopt: it was empty)
// and missed `b`, T2's. Realtime edges need no witness (the transactions' lines say it).
struct EdgeWhy {
  int64_t key = 0;
  std::optional<int64_t> a;
  int64_t b = 0;
};

class DependencyGraph {
 public:
  struct Out {
    int to;
    uint8_t kinds;  // EdgeKind bits
  };

  explicit DependencyGraph(int nodes = 0) : nodes_(nodes) {}

  int nodes() const { return nodes_; }

  // Self edges are dropped (a transaction is never ordered against itself). Of several edges of one kind
  // between the same two nodes, the first added keeps its witness.
  void Add(int from, int to, EdgeKind kind, const EdgeWhy& why = {});

  // Builds the adjacency. REQUIRES: called once, after the last Add and before the accessors below.
  void Finalize();

  absl::Span<const Out> OutEdges(int node) const {
    return absl::MakeConstSpan(out_.data() + offsets_[node], offsets_[node + 1] - offsets_[node]);
  }
  // The witness of from -> to of `kind`, or nullptr when there is no such edge.
  const EdgeWhy* Why(int from, int to, EdgeKind kind) const;
  size_t edge_count() const { return out_.size(); }

 private:
  struct Raw {
    int from;
    int to;
    EdgeKind kind;
    EdgeWhy why;
  };

  int nodes_;
  std::vector<Raw> raw_;         // sorted by (from, to, kind) and deduplicated by Finalize
  std::vector<Out> out_;         // one per (from, to), grouped by `from`
  std::vector<size_t> offsets_;  // out_[offsets_[n], offsets_[n + 1]) leave node n
};

}  // namespace fathom::history

#endif  // FATHOM_TESTS_HISTORY_GRAPH_H_
