// Strict-serializability checker for list-append transaction histories, after Jepsen's Elle
// (Kingsbury & Alvaro, "Elle: Inferring Isolation Anomalies from Experimental Observations", VLDB 2020).
//
// A workload runs transactions of appends and reads on integer keys, every appended value unique per
// key, and records each as an invoke and a completion (docs/formats/history.md). Because lists only
// grow, each read reveals a prefix of its key's order of appends; from those orders the checker builds
// the ww/wr/rw dependency graph, adds real-time edges, and looks for anomalies: aborted and intermediate
// reads, impossible values, and dependency cycles (G0, G1c, G-single, G2, and their -realtime forms).
// No anomaly means strictly serializable as far as the checker can tell.
//
//   HistoryRecorder recorder;  // in the workload's client threads
//   recorder.Invoke(process, {MicroOp::Append(k, v), MicroOp::Read(k2)});
//   recorder.Complete(process, EventType::kOk, {MicroOp::Append(k, v), MicroOp::Read(k2, {{1, 5}})});
//
//   ASSIGN_OR_RETURN(History history, ParseHistory(recorder.Text()));   // or ReadHistoryFile(path)
//   CheckResult result = CheckHistory(history);
//   EXPECT_TRUE(result.valid()) << result.ToString();
//
// From a shell: bazel run //tests/history:check_history -- /path/to/history.jsonl
#ifndef FATHOM_TESTS_HISTORY_HISTORY_H_
#define FATHOM_TESTS_HISTORY_HISTORY_H_

#include "tests/history/anomaly.h"  // IWYU pragma: export
#include "tests/history/check.h"    // IWYU pragma: export
#include "tests/history/format.h"   // IWYU pragma: export
#include "tests/history/parse.h"    // IWYU pragma: export
#include "tests/history/types.h"    // IWYU pragma: export

#endif  // FATHOM_TESTS_HISTORY_HISTORY_H_
