#include "platform/node/control/grpc_status.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace fathom::control {

absl::StatusCode ToAbslStatusCode(grpc::StatusCode code) {
  const int number = static_cast<int>(code);
  if (number < 0 || number > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    return absl::StatusCode::kUnknown;
  }
  return static_cast<absl::StatusCode>(number);
}

absl::Status ToAbslStatus(const grpc::Status& status, std::string_view context) {
  if (status.ok()) return absl::OkStatus();
  std::string message = status.error_message();
  if (!context.empty()) message = absl::StrCat(std::string(context), ": ", message);
  return absl::Status(ToAbslStatusCode(status.error_code()), message);
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace fathom::control
