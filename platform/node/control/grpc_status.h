// Conversions between grpc::Status and absl::Status. The two share their code numbers (both follow
// google.rpc.Code), so a code crosses unchanged; an unknown number becomes Unknown.
//
//   grpc::Status reply = ToGrpcStatus(handler_result.status());                    // server
//   return ToAbslStatus(stub->Stats(&context, request, &response), "Stats to x");  // client
#ifndef FATHOM_PLATFORM_NODE_CONTROL_GRPC_STATUS_H_
#define FATHOM_PLATFORM_NODE_CONTROL_GRPC_STATUS_H_

#include <string_view>

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace fathom::control {

absl::StatusCode ToAbslStatusCode(grpc::StatusCode code);

// The same code; the message is "<context>: <grpc message>" (just the gRPC message if context is empty).
absl::Status ToAbslStatus(const grpc::Status& status, std::string_view context);

grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_GRPC_STATUS_H_
