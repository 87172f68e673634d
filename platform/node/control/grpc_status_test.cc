// Status codes cross between gRPC and Abseil unchanged, with the call named in the message.
#include "platform/node/control/grpc_status.h"

#include "gtest/gtest.h"

namespace fathom::control {
namespace {

TEST(GrpcStatusTest, EveryCodeRoundTrips) {
  for (int code = 0; code <= 16; ++code) {
    const absl::Status absl_status(static_cast<absl::StatusCode>(code), code == 0 ? "" : "why");
    const grpc::Status grpc_status = ToGrpcStatus(absl_status);
    EXPECT_EQ(static_cast<int>(grpc_status.error_code()), code);
    EXPECT_EQ(ToAbslStatus(grpc_status, ""), absl_status);
  }
}

TEST(GrpcStatusTest, NamesTheCall) {
  absl::Status status = ToAbslStatus(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "wrong cluster token"),
                                     "Control.Stats to 127.0.0.1:1");
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(), "Control.Stats to 127.0.0.1:1: wrong cluster token");
}

TEST(GrpcStatusTest, UnknownNumbersBecomeUnknown) {
  EXPECT_EQ(ToAbslStatusCode(static_cast<grpc::StatusCode>(42)), absl::StatusCode::kUnknown);
  EXPECT_EQ(ToAbslStatusCode(grpc::StatusCode::DO_NOT_USE), absl::StatusCode::kUnknown);
}

}  // namespace
}  // namespace fathom::control
