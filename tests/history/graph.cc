#include "tests/history/graph.h"

#include <algorithm>
#include <tuple>

namespace fathom::history {

absl::string_view EdgeKindName(EdgeKind kind) {
  switch (kind) {
    case kWW:
      return "ww";
    case kWR:
      return "wr";
    case kRW:
      return "rw";
    case kRealtime:
      return "realtime";
  }
  return "?";
}

void DependencyGraph::Add(int from, int to, EdgeKind kind, const EdgeWhy& why) {
  if (from == to) return;
  raw_.push_back({from, to, kind, why});
}

void DependencyGraph::Finalize() {
  auto order = [](const Raw& x, const Raw& y) {
    return std::tie(x.from, x.to, x.kind) < std::tie(y.from, y.to, y.kind);
  };
  // Stable, so the first witness added for an edge is the one kept.
  std::stable_sort(raw_.begin(), raw_.end(), order);
  raw_.erase(std::unique(raw_.begin(), raw_.end(),
                         [](const Raw& x, const Raw& y) { return x.from == y.from && x.to == y.to && x.kind == y.kind; }),
             raw_.end());
  offsets_.assign(nodes_ + 1, 0);
  for (const Raw& r : raw_) {
    if (!out_.empty() && offsets_[r.from + 1] > 0 && out_.back().to == r.to) {
      out_.back().kinds |= r.kind;
      continue;
    }
    out_.push_back({r.to, static_cast<uint8_t>(r.kind)});
    ++offsets_[r.from + 1];
  }
  for (int n = 0; n < nodes_; ++n) offsets_[n + 1] += offsets_[n];
}

const EdgeWhy* DependencyGraph::Why(int from, int to, EdgeKind kind) const {
  const Raw probe{from, to, kind, {}};
  auto it = std::lower_bound(raw_.begin(), raw_.end(), probe, [](const Raw& x, const Raw& y) {
    return std::tie(x.from, x.to, x.kind) < std::tie(y.from, y.to, y.kind);
  });
  if (it == raw_.end() || it->from != from || it->to != to || it->kind != kind) return nullptr;
  return &it->why;
}

}  // namespace fathom::history
