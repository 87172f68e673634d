#include "tests/history/infer.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fathom::history {

std::string FormatList(const std::vector<int64_t>& list) {
  if (list.size() <= 10) return absl::StrCat("[", absl::StrJoin(list, " "), "]");
  return absl::StrCat("[", list[0], " ", list[1], " ", list[2], " ... ", list[list.size() - 2], " ",
                      list.back(), "] (", list.size(), " values)");
}

namespace {

struct ReadRef {
  int txn;
  int op;
};

struct KeyFacts {
  std::vector<ReadRef> reads;                    // by ok transactions, in transaction order
  std::vector<std::pair<int64_t, int>> appends;  // (value, txn) by ok and info transactions
  bool usable = true;  // false once its reads are found inconsistent: no order, so no edges
};

struct WriteSite {
  int txn;
  int op;
};

class Inferrer {
 public:
  Inferrer(const History& history, bool realtime)
      : history_(history), realtime_(realtime), graph_(static_cast<int>(history.txns.size())) {}

  Inference Run() {
    Index();
    for (const Txn& t : history_.txns) {
      if (t.outcome == EventType::kOk) CheckInternal(t);
    }
    for (auto& [key, facts] : keys_) {
      for (const ReadRef& r : facts.reads) CheckReadValues(key, r, &facts);
      InferKey(key, &facts);
    }
    if (realtime_) AddRealtimeEdges();
    graph_.Finalize();
    return {std::move(anomalies_), std::move(graph_)};
  }

 private:
  const std::vector<int64_t>& List(const ReadRef& r) const { return *history_.txns[r.txn].ops[r.op].result; }

  const WriteSite* Writer(int64_t key, int64_t value) const {
    auto it = writer_.find({key, value});
    return it == writer_.end() ? nullptr : &it->second;
  }
  // The writer of `value`, if its transaction may have committed (ok or info); -1 otherwise.
  int CommittableWriter(int64_t key, int64_t value) const {
    const WriteSite* w = Writer(key, value);
    if (w == nullptr || history_.txns[w->txn].outcome == EventType::kFail) return -1;
    return w->txn;
  }

  void Report(AnomalyType type, std::vector<int> txns, std::string what) {
    for (int t : txns) absl::StrAppend(&what, "\n  ", DescribeTxn(history_.txns[t]));
    anomalies_.push_back({type, std::move(txns), std::move(what)});
  }

  void Index() {
    for (const Txn& t : history_.txns) {
      for (size_t i = 0; i < t.ops.size(); ++i) {
        const MicroOp& op = t.ops[i];
        if (op.kind == MicroOp::Kind::kAppend) {
          // ParseHistory guarantees one writer per (key, value).
          writer_.try_emplace({op.key, op.value}, WriteSite{t.id, static_cast<int>(i)});
          final_append_[{t.id, op.key}] = op.value;
          if (t.outcome != EventType::kFail) keys_[op.key].appends.emplace_back(op.value, t.id);
        } else if (t.outcome == EventType::kOk) {
          keys_[op.key].reads.push_back({t.id, static_cast<int>(i)});
        }
      }
    }
  }

  // A transaction sees its own appends, and a list only grows within it: a read must be the previous
  // read of the key plus the appends since, or (with no previous read) end in the appends so far. It
  // must not hold a value the transaction appends only later.
  void CheckInternal(const Txn& t) {
    absl::flat_hash_map<int64_t, std::vector<int64_t>> known;  // key -> what the last read returned
    absl::flat_hash_map<int64_t, std::vector<int64_t>> own;    // key -> appends since that read
    for (size_t i = 0; i < t.ops.size(); ++i) {
      const MicroOp& op = t.ops[i];
      if (op.kind == MicroOp::Kind::kAppend) {
        own[op.key].push_back(op.value);
        continue;
      }
      const std::vector<int64_t>& list = *op.result;
      const std::vector<int64_t>& mine = own[op.key];
      const std::string read = absl::StrCat("T", t.id, " read key ", op.key, " = ", FormatList(list));
      for (int64_t v : list) {
        const WriteSite* w = Writer(op.key, v);
        if (w != nullptr && w->txn == t.id && w->op > static_cast<int>(i)) {
          return Report(AnomalyType::kInternal, {t.id},
                        absl::StrCat(read, ", which holds ", v, ", an append that comes later in T", t.id));
        }
      }
      auto prior = known.find(op.key);
      if (prior != known.end()) {
        std::vector<int64_t> expected = prior->second;
        expected.insert(expected.end(), mine.begin(), mine.end());
        if (list != expected) {
          return Report(AnomalyType::kInternal, {t.id},
                        absl::StrCat(read, ", but its earlier read ", FormatList(prior->second), " and its appends ",
                                     FormatList(mine), " since make ", FormatList(expected)));
        }
      } else if (list.size() < mine.size() || !std::equal(mine.begin(), mine.end(), list.end() - mine.size())) {
        return Report(AnomalyType::kInternal, {t.id},
                      absl::StrCat(read, " after appending ", FormatList(mine), "; it must end in them"));
      }
      known[op.key] = list;
      own[op.key].clear();
    }
  }

  // Values a read may not hold: repeated ones, ones nobody appended, ones a failed transaction appended;
  // and a last value its writer overwrote later in the same transaction.
  void CheckReadValues(int64_t key, const ReadRef& r, KeyFacts* facts) {
    const std::vector<int64_t>& list = List(r);
    const std::string read = absl::StrCat("T", r.txn, " read key ", key, " = ", FormatList(list));
    absl::flat_hash_set<int64_t> seen;
    std::vector<int64_t> garbage;
    absl::btree_map<int, std::vector<int64_t>> aborted;  // failed writer -> its values read
    bool duplicate_reported = false;
    for (int64_t v : list) {
      if (!seen.insert(v).second && !duplicate_reported) {
        duplicate_reported = true;
        facts->usable = false;  // no single position for v: the order of this key is unknown
        std::vector<int> txns = {r.txn};
        const WriteSite* w = Writer(key, v);
        if (w != nullptr && w->txn != r.txn) txns.insert(txns.begin(), w->txn);
        Report(AnomalyType::kDuplicateElements, std::move(txns), absl::StrCat(read, ": ", v, " appears more than once"));
      }
      const WriteSite* w = Writer(key, v);
      if (w == nullptr) {
        garbage.push_back(v);
      } else if (history_.txns[w->txn].outcome == EventType::kFail) {
        aborted[w->txn].push_back(v);
      }
    }
    if (!garbage.empty()) {
      Report(AnomalyType::kGarbageRead, {r.txn},
             absl::StrCat(read, ": ", absl::StrJoin(garbage, ", "), garbage.size() == 1 ? " was" : " were",
                          " never appended to key ", key));
    }
    for (const auto& [writer, values] : aborted) {
      Report(AnomalyType::kG1a, {writer, r.txn},
             absl::StrCat(read, ": ", absl::StrJoin(values, ", "), " appended by T", writer, ", which failed"));
    }
    // The last value from another transaction (the reader's own appends may follow it) must be that
    // transaction's final append to the key.
    for (size_t i = list.size(); i-- > 0;) {
      const int writer = CommittableWriter(key, list[i]);
      if (writer < 0 || writer == r.txn) continue;
      const int64_t final_value = final_append_.at({writer, key});
      if (final_value != list[i]) {
        Report(AnomalyType::kG1b, {writer, r.txn},
               absl::StrCat(read, ": ", list[i], " is an intermediate append of T", writer,
                            " (its final append to key ", key, " is ", final_value, ")"));
      }
      return;
    }
  }

  // Elle's inference for one key. Lists only grow, so every read is a prefix of the true order, and the
  // longest read is the most of that order anyone saw. Appends nobody read come after all of it.
  void InferKey(int64_t key, KeyFacts* facts) {
    static const std::vector<int64_t> kEmpty;
    const std::vector<int64_t>* order = &kEmpty;
    int longest = -1;
    for (const ReadRef& r : facts->reads) {
      if (List(r).size() > order->size()) {
        order = &List(r);
        longest = r.txn;
      }
    }
    for (const ReadRef& r : facts->reads) {
      const std::vector<int64_t>& list = List(r);
      if (std::equal(list.begin(), list.end(), order->begin())) continue;
      Report(AnomalyType::kIncompatibleOrder, {longest, r.txn},
             absl::StrCat("key ", key, ": T", longest, " read ", FormatList(*order), " and T", r.txn, " read ",
                          FormatList(list), "; neither is a prefix of the other"));
      facts->usable = false;
      break;  // one report per key is enough to say its order is broken
    }
    if (!facts->usable) return;

    // Values whose writer may have committed, in order. Garbage and aborted values (reported above) are
    // skipped: they say nothing about the order of the others.
    std::vector<std::pair<int64_t, int>> known;  // (value, writer)
    std::vector<size_t> next_known(order->size() + 1);  // position -> first index into `known` at or after it
    for (size_t i = 0; i < order->size(); ++i) {
      next_known[i] = known.size();
      const int w = CommittableWriter(key, (*order)[i]);
      if (w >= 0) known.emplace_back((*order)[i], w);
    }
    next_known[order->size()] = known.size();
    for (size_t j = 1; j < known.size(); ++j) {
      graph_.Add(known[j - 1].second, known[j].second, kWW, {key, known[j - 1].first, known[j].first});
    }
    const absl::flat_hash_set<int64_t> observed(order->begin(), order->end());
    std::vector<std::pair<int64_t, int>> unobserved;
    for (const auto& append : facts->appends) {
      if (!observed.contains(append.first)) unobserved.push_back(append);
    }
    if (!known.empty()) {
      for (const auto& [value, writer] : unobserved) graph_.Add(known.back().second, writer, kWW, {key, known.back().first, value});
    }

    for (const ReadRef& r : facts->reads) {
      const std::vector<int64_t>& list = List(r);
      // wr: the last value the reader saw from another transaction.
      int source = -1;
      for (size_t i = list.size(); i-- > 0;) {
        const int w = CommittableWriter(key, list[i]);
        if (w < 0 || w == r.txn) continue;
        graph_.Add(w, r.txn, kWR, {key, list[i], 0});
        source = w;
        break;
      }
      // rw: the reader precedes whoever appended the next value it did not see. Not when that is the
      // transaction it read from: it saw only part of that transaction's appends, which is G1b (reported
      // above), and the two-transaction cycle the edge would close says nothing more.
      std::optional<int64_t> last;
      if (!list.empty()) last = list.back();
      const size_t next = next_known[list.size()];
      if (next < known.size()) {
        if (known[next].second != source) graph_.Add(r.txn, known[next].second, kRW, {key, last, known[next].first});
      } else {
        for (const auto& [value, writer] : unobserved) {
          if (writer != source) graph_.Add(r.txn, writer, kRW, {key, last, value});
        }
      }
    }
  }

  // T1 -> T2 when T1 completed ok before T2 was invoked (line order). Only the edges not implied by
  // others: `frontier` holds the ok completions no later completion is known to follow.
  void AddRealtimeEdges() {
    struct Step {
      int line;
      int txn;
      bool invoke;
    };
    std::vector<Step> steps;
    for (const Txn& t : history_.txns) {
      if (t.outcome == EventType::kFail) continue;
      steps.push_back({t.invoke_line, t.id, true});
      if (t.outcome == EventType::kOk) steps.push_back({t.complete_line, t.id, false});
    }
    std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.line < b.line; });
    absl::btree_set<int> frontier;
    absl::flat_hash_map<int, std::vector<int>> predecessors;
    for (const Step& s : steps) {
      if (s.invoke) {
        for (int f : frontier) graph_.Add(f, s.txn, kRealtime);
        predecessors[s.txn].assign(frontier.begin(), frontier.end());
        continue;
      }
      // Everything s.txn follows is now implied through s.txn.
      for (int p : predecessors[s.txn]) frontier.erase(p);
      predecessors.erase(s.txn);
      frontier.insert(s.txn);
    }
  }

  const History& history_;
  const bool realtime_;
  DependencyGraph graph_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, WriteSite> writer_;  // (key, value) -> where appended
  absl::flat_hash_map<std::pair<int, int64_t>, int64_t> final_append_;  // (txn, key) -> its last append
  absl::btree_map<int64_t, KeyFacts> keys_;                             // ordered: reports are deterministic
  std::vector<Anomaly> anomalies_;
};

}  // namespace

Inference Infer(const History& history, bool realtime) { return Inferrer(history, realtime).Run(); }

}  // namespace fathom::history
