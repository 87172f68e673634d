// Linearizability of single-key operations: one key read and written as a register (put replaces the
// value, get returns it, absent until the first put). Each operation is an interval of real time, from
// its invocation to its answer; the history is linearizable when every operation can be given one
// point inside its interval such that the reads, in that order, return what the last write before
// them wrote (Herlihy & Wing). Wing & Gong's search, with Lowe's memo of (operations placed, value).
//
// A write that failed or never answered may have happened or not: give it no completion, and it may
// be placed anywhere after its invocation, or nowhere. A read that failed says nothing: leave it out.
//
//   std::vector<RegisterOp> ops = {RegisterOp::Write("a", 10, 20), RegisterOp::Read("a", 25, 30)};
//   absl::Status s = CheckRegister(ops);  // OK; FailedPrecondition says which reads cannot be placed
#ifndef FATHOM_TESTS_HISTORY_REGISTER_H_
#define FATHOM_TESTS_HISTORY_REGISTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace fathom::history {

struct RegisterOp {
  enum class Kind { kWrite, kRead };

  static RegisterOp Write(std::string value, int64_t invoked, std::optional<int64_t> completed) {
    return {Kind::kWrite, std::move(value), invoked, completed, ""};
  }
  // `value` nullopt: the read found the key absent.
  static RegisterOp Read(std::optional<std::string> value, int64_t invoked, int64_t completed) {
    return {Kind::kRead, std::move(value), invoked, completed, ""};
  }

  Kind kind = Kind::kRead;
  std::optional<std::string> value;   // written, or read (nullopt: absent)
  int64_t invoked = 0;                // any unit, the same for every operation
  std::optional<int64_t> completed;   // nullopt: a write that may or may not have happened
  std::string label;                  // who did it, for the report
};

// OK when linearizable. FailedPrecondition when not: how far the search got, the value then, and the
// operations none of which could come next. InvalidArgument for a read without a completion or an
// interval that ends before it starts; ResourceExhausted when the search visits more than
// `max_states` states (nothing is known then).
absl::Status CheckRegister(std::vector<RegisterOp> ops, size_t max_states = size_t{1} << 20);

}  // namespace fathom::history

#endif  // FATHOM_TESTS_HISTORY_REGISTER_H_
