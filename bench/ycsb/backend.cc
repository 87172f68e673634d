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

}  // namespace fathom::ycsb
