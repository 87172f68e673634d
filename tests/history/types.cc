#include "tests/history/types.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fathom::history {

absl::string_view EventTypeName(EventType type) {
  switch (type) {
    case EventType::kInvoke:
      return "invoke";
    case EventType::kOk:
      return "ok";
    case EventType::kFail:
      return "fail";
    case EventType::kInfo:
      return "info";
  }
  return "?";
}

std::string FormatOps(const std::vector<MicroOp>& ops, int max_ops) {
  std::string out = "[";
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i > 0) out += " ";
    if (static_cast<int>(i) == max_ops) {
      absl::StrAppend(&out, "... ", ops.size() - i, " more");
      break;
    }
    const MicroOp& op = ops[i];
    if (op.kind == MicroOp::Kind::kAppend) {
      absl::StrAppend(&out, "[:append ", op.key, " ", op.value, "]");
    } else if (!op.result.has_value()) {
      absl::StrAppend(&out, "[:r ", op.key, " nil]");
    } else {
      absl::StrAppend(&out, "[:r ", op.key, " [", absl::StrJoin(*op.result, " "), "]]");
    }
  }
  return out + "]";
}

std::string DescribeTxn(const Txn& txn) {
  std::string lines = txn.complete_line > 0 ? absl::StrCat("lines ", txn.invoke_line, "-", txn.complete_line)
                                            : absl::StrCat("line ", txn.invoke_line, ", never completed");
  return absl::StrCat("T", txn.id, " (process ", txn.process, ", ", EventTypeName(txn.outcome), ", ", lines,
                      ") ", FormatOps(txn.ops));
}

}  // namespace fathom::history
