// Writing history files (docs/formats/history.md): FormatEvent for one line, HistoryRecorder for a
// workload whose client threads record their transactions as they run.
//
//   HistoryRecorder recorder;                       // times from Clock::Real(), never decreasing
//   recorder.Invoke(/*process=*/3, {MicroOp::Append(1, 7), MicroOp::Read(2)});
//   ... run the transaction ...
//   recorder.Complete(3, EventType::kOk, {MicroOp::Append(1, 7), MicroOp::Read(2, {{4, 7}})});
//   RETURN_IF_ERROR(recorder.WriteFile(path));      // or CheckHistory(ParseHistory(recorder.Text()))
#ifndef FATHOM_TESTS_HISTORY_FORMAT_H_
#define FATHOM_TESTS_HISTORY_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "platform/base/clock.h"
#include "tests/history/types.h"

namespace fathom::history {

// The line a history file holds for `event`, without the '\n'. ParseEvent(FormatEvent(e)) == e for
// every event that obeys the schema.
std::string FormatEvent(const Event& event);

// Collects the lines of a history in memory. Thread-safe: the time of each event is read under the same
// lock that appends its line, so line order is real-time order and times never decrease, even when the
// clock steps back (the previous time is reused then).
class HistoryRecorder {
 public:
  explicit HistoryRecorder(const Clock* clock = Clock::Real()) : clock_(clock) {}

  void Invoke(int64_t process, std::vector<MicroOp> ops) {
    Record(process, EventType::kInvoke, std::move(ops));
  }
  // `type` is kOk (reads filled in), kFail or kInfo (reads null, micro-ops as invoked).
  void Complete(int64_t process, EventType type, std::vector<MicroOp> ops) {
    Record(process, type, std::move(ops));
  }

  // The history so far, one line per event, each ending in '\n'.
  std::string Text() const;
  absl::Status WriteFile(const std::string& path) const;

 private:
  void Record(int64_t process, EventType type, std::vector<MicroOp> ops);

  const Clock* const clock_;
  mutable absl::Mutex mu_;
  std::string text_ ABSL_GUARDED_BY(mu_);
  int64_t last_time_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace fathom::history

#endif  // FATHOM_TESTS_HISTORY_FORMAT_H_
