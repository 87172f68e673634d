#include "bench/ycsb/backend.h"

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
