// The anomalies the checker reports. Names follow Elle (Kingsbury & Alvaro, VLDB 2020) and Adya's
// phenomena; docs/formats/history.md defines each one.
#ifndef FATHOM_TESTS_HISTORY_ANOMALY_H_
#define FATHOM_TESTS_HISTORY_ANOMALY_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fathom::history {

enum class AnomalyType {
  // Found without a cycle search.
  kIncompatibleOrder,  // two reads of a key where neither is a prefix of the other
  kDuplicateElements,  // a read list holds a value twice
  kGarbageRead,        // a read holds a value nobody appended to that key
  kInternal,           // a transaction's read disagrees with its own earlier reads and appends
  kG1a,                // aborted read: a value appended by a failed transaction was read
  kG1b,                // intermediate read: a read ends in a value its writer later overwrote in the same txn
  // Cycles in the dependency graph, weakest first. Serializability forbids all of them.
  kG0,       // ww edges only
  kG1c,      // ww and wr edges
  kGSingle,  // exactly one rw edge
  kG2,       // two or more rw edges
  // Cycles that need a real-time edge: serializable perhaps, but not strictly serializable.
  kG0Realtime,
  kG1cRealtime,
  kGSingleRealtime,
  kG2Realtime,
};

// "incompatible-order", "duplicate-elements", "garbage-read", "internal", "G1a", "G1b", "G0", "G1c",
// "G-single", "G2", "G0-realtime", "G1c-realtime", "G-single-realtime", "G2-realtime".
absl::string_view AnomalyName(AnomalyType type);

struct Anomaly {
  AnomalyType type;
  std::vector<int> txns;    // transaction ids involved; for a cycle in cycle order (the last precedes the first)
  std::string explanation;  // what was seen, then each transaction on its own line
};

}  // namespace fathom::history

#endif  // FATHOM_TESTS_HISTORY_ANOMALY_H_
