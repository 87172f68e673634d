#include "tests/history/check.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tests/history/cycles.h"
#include "tests/history/infer.h"

namespace fathom::history {

absl::string_view AnomalyName(AnomalyType type) {
  switch (type) {
    case AnomalyType::kIncompatibleOrder:
      return "incompatible-order";
    case AnomalyType::kDuplicateElements:
      return "duplicate-elements";
    case AnomalyType::kGarbageRead:
      return "garbage-read";
    case AnomalyType::kInternal:
      return "internal";
    case AnomalyType::kG1a:
      return "G1a";
    case AnomalyType::kG1b:
      return "G1b";
    case AnomalyType::kG0:
      return "G0";
    case AnomalyType::kG1c:
      return "G1c";
    case AnomalyType::kGSingle:
      return "G-single";
    case AnomalyType::kG2:
      return "G2";
    case AnomalyType::kG0Realtime:
      return "G0-realtime";
    case AnomalyType::kG1cRealtime:
      return "G1c-realtime";
    case AnomalyType::kGSingleRealtime:
      return "G-single-realtime";
    case AnomalyType::kG2Realtime:
      return "G2-realtime";
  }
  return "?";
}

namespace {

// The class of a cycle follows from the kinds of its edges alone.
AnomalyType Classify(const Cycle& cycle) {
  int rw = 0;
  bool wr = false, realtime = false;
  for (EdgeKind k : cycle.kinds) {
    rw += k == kRW;
    wr |= k == kWR;
    realtime |= k == kRealtime;
  }
  if (rw >= 2) return realtime ? AnomalyType::kG2Realtime : AnomalyType::kG2;
  if (rw == 1) return realtime ? AnomalyType::kGSingleRealtime : AnomalyType::kGSingle;
  if (wr) return realtime ? AnomalyType::kG1cRealtime : AnomalyType::kG1c;
  return realtime ? AnomalyType::kG0Realtime : AnomalyType::kG0;
}

std::string Headline(AnomalyType type, const Cycle& cycle) {
  const std::string length = absl::StrCat("a cycle of ", cycle.nodes.size(), " transactions");
  switch (type) {
    case AnomalyType::kG0:
      return absl::StrCat("write cycle: ", length, " ordered by appends (ww) alone");
    case AnomalyType::kG1c:
      return absl::StrCat("circular information flow: ", length, " of ww and wr edges");
    case AnomalyType::kGSingle:
      return absl::StrCat("read skew: ", length, " with exactly one anti-dependency (rw)");
    case AnomalyType::kG2:
      return absl::StrCat("anti-dependency cycle: ", length, " with two or more rw edges");
    default:
      return absl::StrCat(length, " that needs real-time order: no serial order both explains the reads "
                          "and respects which transaction finished before which began (not strictly serializable)");
  }
}

std::string ExplainEdge(const History& history, const DependencyGraph& graph, int from, int to, EdgeKind kind) {
  const Txn& a = history.txns[from];
  const Txn& b = history.txns[to];
  const std::string arrow = absl::StrCat("-", EdgeKindName(kind), "-> T", to, ": ");
  if (kind == kRealtime) {
    return absl::StrCat(arrow, "T", from, " completed on line ", a.complete_line, " before T", to,
                        " was invoked on line ", b.invoke_line);
  }
  const EdgeWhy* why = graph.Why(from, to, kind);
  if (why == nullptr) return arrow;
  switch (kind) {
    case kWW:
      return absl::StrCat(arrow, "T", from, " appended ", why->a.value_or(0), " to key ", why->key, ", then T", to,
                          " appended ", why->b);
    case kWR:
      return absl::StrCat(arrow, "T", to, " read key ", why->key, " and saw ", why->a.value_or(0), ", which T", from,
                          " appended");
    case kRW:
      return absl::StrCat(arrow, "T", from, " read key ", why->key,
                          why->a.has_value() ? absl::StrCat(" up to ", *why->a) : std::string(" empty"),
                          " and missed ", why->b, ", which T", to, " appended later");
    default:
      return arrow;
  }
}

Anomaly CycleAnomaly(const History& history, const DependencyGraph& graph, const Cycle& cycle) {
  Anomaly anomaly;
  anomaly.type = Classify(cycle);
  anomaly.txns = cycle.nodes;
  anomaly.explanation = Headline(anomaly.type, cycle);
  if (!cycle.exhaustive) {
    absl::StrAppend(&anomaly.explanation, " (search limit reached: a cycle with fewer rw edges may exist)");
  }
  const size_t n = cycle.nodes.size();
  for (size_t i = 0; i < n; ++i) {
    absl::StrAppend(&anomaly.explanation, "\n  ", DescribeTxn(history.txns[cycle.nodes[i]]), "\n    ",
                    ExplainEdge(history, graph, cycle.nodes[i], cycle.nodes[(i + 1) % n], cycle.kinds[i]));
  }
  return anomaly;
}

}  // namespace

bool CheckResult::Has(AnomalyType type) const {
  return std::any_of(anomalies.begin(), anomalies.end(), [type](const Anomaly& a) { return a.type == type; });
}

std::string CheckResult::ToString() const {
  std::string out = absl::StrCat(ok + failed + info, " transactions (", ok, " ok, ", failed, " failed, ", info,
                                 " info): ");
  if (valid()) return out + "no anomalies found";
  absl::StrAppend(&out, anomalies.size(), anomalies.size() == 1 ? " anomaly" : " anomalies");
  for (const Anomaly& a : anomalies) absl::StrAppend(&out, "\n", AnomalyName(a.type), ": ", a.explanation);
  return out;
}

CheckResult CheckHistory(const History& history, const CheckOptions& options) {
  CheckResult result;
  for (const Txn& t : history.txns) {
    result.ok += t.outcome == EventType::kOk;
    result.failed += t.outcome == EventType::kFail;
    result.info += t.outcome == EventType::kInfo;
  }
  Inference inference = Infer(history, options.realtime);
  result.anomalies = std::move(inference.anomalies);
  CycleSearchOptions search;
  search.realtime = options.realtime;
  search.max_steps = options.max_search_steps;
  for (const Cycle& cycle : FindCycles(inference.graph, search)) {
    result.anomalies.push_back(CycleAnomaly(history, inference.graph, cycle));
  }
  std::stable_sort(result.anomalies.begin(), result.anomalies.end(),
                   [](const Anomaly& a, const Anomaly& b) { return a.type < b.type; });
  return result;
}

}  // namespace fathom::history
