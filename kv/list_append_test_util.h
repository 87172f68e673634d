// List-append on kv keys, for workloads whose histories the checker reads (tests/history): a key's
// value is a list of integers ("1,2,3"), and an append is Get(tx) + Put(tx) in one transaction. Shared
// by kv/kv_workloads_test (embedded clusters) and tests/node/fathomd_resize_test (fathomd processes).
//
//   absl::Status s = AppendToList(txns, table, "key3", 17);
//   recorder.Complete(process, AppendOutcome(s), {history::MicroOp::Append(3, 17)});
#ifndef FATHOM_KV_LIST_APPEND_TEST_UTIL_H_
#define FATHOM_KV_LIST_APPEND_TEST_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "kv/kv.h"
#include "tests/history/history.h"
#include "txn/txn.h"

namespace fathom::kv::testing {

inline std::string EncodeList(const std::vector<int64_t>& list) { return absl::StrJoin(list, ","); }

// DataLoss for anything but comma-separated integers ("" is the empty list).
inline absl::StatusOr<std::vector<int64_t>> DecodeList(std::string_view text) {
  std::vector<int64_t> list;
  for (absl::string_view part : absl::StrSplit(absl::string_view(text.data(), text.size()), ',', absl::SkipEmpty())) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v)) return absl::DataLossError(absl::StrCat("list value '", std::string(text), "'"));
    list.push_back(v);
  }
  return list;
}

// Appends `value` to the list at `key` in one transaction of `txns` (application threads). OK:
// committed; an error: not committed, unless txn::MayHaveCommitted says it may have been.
inline absl::Status AppendToList(txn::TransactionService& txns, const Table& table, std::string_view key,
                                 int64_t value) {
  txn::Transaction tx = txns.Begin();
  absl::Status s = [&]() -> absl::Status {
    absl::StatusOr<std::string> current = table.Get(tx, key);
    if (!current.ok()) return current.status();
    absl::StatusOr<std::vector<int64_t>> list = DecodeList(*current);
    if (!list.ok()) return list.status();
    list->push_back(value);
    if (absl::Status put = table.Put(tx, key, EncodeList(*list)); !put.ok()) return put;
    return tx.Commit();
  }();
  if (!tx.finished()) tx.Abort();
  return s;
}

// How an append's status goes into a history: ok, info when its commit may have taken effect
// (txn::MayHaveCommitted), else fail (certainly not committed: the checker holds the layer to that).
inline history::EventType AppendOutcome(const absl::Status& s) {
  if (s.ok()) return history::EventType::kOk;
  return txn::MayHaveCommitted(s) ? history::EventType::kInfo : history::EventType::kFail;
}

// Checks a recorded list-append history against the lists read at the end (final_lists[k] is key k's,
// named key_name(k)): the checker must find it strictly serializable, and every acknowledged append must
// be in its key's final list exactly once. FailedPrecondition names the first violation.
inline absl::StatusOr<history::CheckResult> CheckListAppendHistory(
    const std::string& text, const std::vector<std::vector<int64_t>>& final_lists,
    const std::function<std::string(int)>& key_name) {
  absl::StatusOr<history::History> parsed = history::ParseHistory(text);
  if (!parsed.ok()) return parsed.status();
  history::CheckResult result = history::CheckHistory(*parsed);
  if (!result.valid()) return absl::FailedPreconditionError(result.ToString());
  for (const history::Txn& t : parsed->txns) {
    if (t.outcome != history::EventType::kOk) continue;
    for (const history::MicroOp& op : t.ops) {
      if (op.kind != history::MicroOp::Kind::kAppend) continue;
      if (op.key < 0 || static_cast<size_t>(op.key) >= final_lists.size()) {
        return absl::FailedPreconditionError(absl::StrCat("append to key ", op.key, ", which was not read at the end"));
      }
      const std::vector<int64_t>& list = final_lists[static_cast<size_t>(op.key)];
      if (std::count(list.begin(), list.end(), op.value) != 1) {
        return absl::FailedPreconditionError(absl::StrCat("acknowledged append of ", op.value, " to ",
                                                          key_name(static_cast<int>(op.key)),
                                                          " is not in its final list once: [", EncodeList(list), "]"));
      }
    }
  }
  return result;
}

}  // namespace fathom::kv::testing

#endif  // FATHOM_KV_LIST_APPEND_TEST_UTIL_H_
