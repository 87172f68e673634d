#include "tests/history/register.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fathom::history {
namespace {

constexpr int kAbsent = -1;

std::string Describe(const RegisterOp& op) {
  const std::string value = op.value.has_value() ? absl::StrCat("\"", *op.value, "\"") : "absent";
  const std::string end = op.completed.has_value() ? absl::StrCat(*op.completed) : "?";
  return absl::StrCat(op.kind == RegisterOp::Kind::kWrite ? "write " : "read ", value, " [", op.invoked, ", ",
                      end, "]", op.label.empty() ? "" : " by ", op.label);
}

class Search {
 public:
  Search(std::vector<RegisterOp> ops, size_t max_states) : ops_(std::move(ops)), max_states_(max_states) {
    absl::flat_hash_map<std::string, int> ids;
    for (const RegisterOp& op : ops_) {
      int id = kAbsent;
      if (op.value.has_value()) id = ids.try_emplace(*op.value, static_cast<int>(ids.size())).first->second;
      value_ids_.push_back(id);
      if (op.completed.has_value()) ++definite_;
    }
    names_.resize(ids.size());
    for (const auto& [name, id] : ids) names_[id] = name;
  }

  absl::Status Run() {
    std::vector<bool> placed(ops_.size(), false);
    if (Place(placed, 0, kAbsent)) return absl::OkStatus();
    if (exhausted_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the search for a linearization of ", ops_.size(), " operations visited more than ",
                       max_states_, " states"));
    }
    std::vector<std::string> stuck;
    for (size_t i : Candidates(deepest_)) stuck.push_back(Describe(ops_[i]));
    return absl::FailedPreconditionError(absl::StrCat(
        "not linearizable: after ", deepest_count_, " of ", definite_, " answered operations, the value ",
        deepest_value_ == kAbsent ? "absent" : absl::StrCat("\"", names_[deepest_value_], "\""),
        ", none of these can come next: ", absl::StrJoin(stuck, "; ")));
  }

 private:
  // Operations not yet placed that may come next: invoked before every unplaced answered one ended.
  std::vector<size_t> Candidates(const std::vector<bool>& placed) const {
    int64_t horizon = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (!placed[i] && ops_[i].completed.has_value()) horizon = std::min(horizon, *ops_[i].completed);
    }
    std::vector<size_t> out;
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (!placed[i] && ops_[i].invoked <= horizon) out.push_back(i);
    }
    return out;
  }

  bool Place(std::vector<bool>& placed, int count, int value) {
    if (count == definite_) return true;
    std::string key(placed.begin(), placed.end());
    key.push_back('|');
    absl::StrAppend(&key, value);
    if (!seen_.insert(std::move(key)).second) return false;
    if (seen_.size() > max_states_) {
      exhausted_ = true;
      return false;
    }
    if (count > deepest_count_ || seen_.size() == 1) {
      deepest_count_ = count;
      deepest_ = placed;
      deepest_value_ = value;
    }
    for (size_t i : Candidates(placed)) {
      const RegisterOp& op = ops_[i];
      const bool write = op.kind == RegisterOp::Kind::kWrite;
      if (!write && value_ids_[i] != value) continue;
      placed[i] = true;
      const bool found = Place(placed, count + (op.completed.has_value() ? 1 : 0), write ? value_ids_[i] : value);
      placed[i] = false;
      if (found) return true;
      if (exhausted_) return false;
    }
    return false;
  }

  const std::vector<RegisterOp> ops_;
  const size_t max_states_;
  std::vector<int> value_ids_;       // per operation: its value's id, kAbsent for none
  std::vector<std::string> names_;   // by value id
  int definite_ = 0;                 // operations with an answer: all must be placed
  absl::flat_hash_set<std::string> seen_;
  bool exhausted_ = false;
  int deepest_count_ = 0;
  std::vector<bool> deepest_;
  int deepest_value_ = kAbsent;
};

}  // namespace

absl::Status CheckRegister(std::vector<RegisterOp> ops, size_t max_states) {
  for (const RegisterOp& op : ops) {
    if (op.kind == RegisterOp::Kind::kRead && !op.completed.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("a read without an answer says nothing: ", Describe(op)));
    }
    if (op.kind == RegisterOp::Kind::kWrite && !op.value.has_value()) {
      return absl::InvalidArgumentError("a write without a value");
    }
    if (op.completed.has_value() && *op.completed < op.invoked) {
      return absl::InvalidArgumentError(absl::StrCat("an operation ends before it starts: ", Describe(op)));
    }
  }
  // In order of invocation, so the search (and its report) does not depend on the order given.
  std::stable_sort(ops.begin(), ops.end(),
                   [](const RegisterOp& a, const RegisterOp& b) { return a.invoked < b.invoked; });
  return Search(std::move(ops), max_states).Run();
}

}  // namespace fathom::history
