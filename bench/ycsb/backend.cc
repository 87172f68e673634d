#include "bench/ycsb/backend.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fathom::ycsb {

ReturnCode ReturnCodeOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return ReturnCode::kOk;
    case absl::StatusCode::kNotFound:
      return ReturnCode::kNotFound;
    case absl::StatusCode::kUnimplemented:
      return ReturnCode::kNotImplemented;
    default:
      return ReturnCode::kError;
  }
}

const char* ReturnCodeName(ReturnCode code) {
  switch (code) {
    case ReturnCode::kOk:
      return "OK";
    case ReturnCode::kNotFound:
      return "NOT_FOUND";
    case ReturnCode::kNotImplemented:
      return "NOT_IMPLEMENTED";
    case ReturnCode::kError:
      return "ERROR";
  }
  return "ERROR";
}

absl::StatusOr<int64_t> BalanceOf(const Record& record, const std::string& key) {
  auto it = record.find(kBalanceField);
  int64_t balance = 0;
  if (it == record.end() || !absl::SimpleAtoi(it->second, &balance)) {
    return absl::DataLossError(absl::StrCat("record ", key, " has no integer \"", kBalanceField, "\" field"));
  }
  return balance;
}

absl::Status ApplyTransfer(Record& from, const std::string& from_key, Record& to, const std::string& to_key,
                           int64_t amount) {
  absl::StatusOr<int64_t> a = BalanceOf(from, from_key);
  if (!a.ok()) return a.status();
  absl::StatusOr<int64_t> b = BalanceOf(to, to_key);
  if (!b.ok()) return b.status();
  from[kBalanceField] = std::to_string(*a - amount);
  to[kBalanceField] = std::to_string(*b + amount);
  return absl::OkStatus();
}

Record ProjectFields(Record record, const FieldList* fields) {
  if (fields == nullptr) return record;
  Record out;
  for (const std::string& field : *fields) {
    auto it = record.find(field);
    if (it != record.end()) out.insert(std::move(*it));
  }
  return out;
}

}  // namespace fathom::ycsb
