// Hand-made histories for tests. Each call adds one line; times go up by 1 per line. Give the micro-ops
// with their read results at Invoke: the invoke line shows them with reads null, Ok fills them in.
//
//   HistoryBuilder h;
//   h.Invoke(0, {A(1, 1)}).Invoke(1, {R(1, {})}).Ok(0).Ok(1);  // two concurrent transactions
//   h.Serial(0, {R(1, {1})});                                 // invoke and ok on consecutive lines
//   History history = h.Parse().value();
#ifndef FATHOM_TESTS_HISTORY_HISTORY_BUILDER_H_
#define FATHOM_TESTS_HISTORY_HISTORY_BUILDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tests/history/format.h"
#include "tests/history/parse.h"
#include "tests/history/types.h"

namespace fathom::history::testing {

inline MicroOp A(int64_t key, int64_t value) { return MicroOp::Append(key, value); }
inline MicroOp R(int64_t key, std::vector<int64_t> result) { return MicroOp::Read(key, std::move(result)); }

class HistoryBuilder {
 public:
  HistoryBuilder& Invoke(int64_t process, std::vector<MicroOp> ops) {
    std::vector<MicroOp> asked = ops;
    for (MicroOp& op : asked) op.result.reset();
    Line({process, EventType::kInvoke, asked, 0});
    open_[process] = {std::move(asked), std::move(ops)};
    return *this;
  }
  HistoryBuilder& Ok(int64_t process) { return Complete(process, EventType::kOk); }
  HistoryBuilder& Fail(int64_t process) { return Complete(process, EventType::kFail); }
  HistoryBuilder& Info(int64_t process) { return Complete(process, EventType::kInfo); }
  HistoryBuilder& Serial(int64_t process, std::vector<MicroOp> ops) {
    return Invoke(process, std::move(ops)).Ok(process);
  }

  const std::string& Text() const { return text_; }
  absl::StatusOr<History> Parse() const { return ParseHistory(text_); }

 private:
  HistoryBuilder& Complete(int64_t process, EventType type) {
    auto& [asked, done] = open_[process];
    Line({process, type, type == EventType::kOk ? done : asked, 0});
    open_.erase(process);
    return *this;
  }
  void Line(Event event) {
    event.time = time_++;
    absl::StrAppend(&text_, FormatEvent(event), "\n");
  }

  std::map<int64_t, std::pair<std::vector<MicroOp>, std::vector<MicroOp>>> open_;  // invoked, completed
  std::string text_;
  int64_t time_ = 0;
};

}  // namespace fathom::history::testing

#endif  // FATHOM_TESTS_HISTORY_HISTORY_BUILDER_H_
