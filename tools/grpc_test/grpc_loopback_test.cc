// A generated gRPC service answers a generated stub over 127.0.0.1, and a stopped server fails fast.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "gtest/gtest.h"
#include "tools/grpc_test/echo.grpc.pb.h"
#include "tools/grpc_test/echo_types.pb.h"

namespace fathom::test {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;

class EchoService final : public Echo::Service {
 public:
  grpc::Status Echo(grpc::ServerContext* context, const EchoRequest* request, EchoReply* reply) override {
    reply->set_text(request->text());
    reply->set_served_before(served_.fetch_add(1));
    return grpc::Status::OK;
  }

 private:
  std::atomic<uint64_t> served_{0};
};

// Starts `service` on a loopback port the kernel picks; sets `*port` to it.
std::unique_ptr<grpc::Server> StartServer(EchoService* service, int* port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), port);
  builder.RegisterService(service);
  return builder.BuildAndStart();
}

std::unique_ptr<Echo::Stub> StubFor(int port) {
  return Echo::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
}

TEST(GrpcLoopbackTest, UnaryCallRoundTrips) {
  EchoService service;
  int port = 0;
  std::unique_ptr<grpc::Server> server = StartServer(&service, &port);
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);

  std::unique_ptr<Echo::Stub> stub = StubFor(port);
  for (uint64_t i = 0; i < 2; ++i) {
    grpc::ClientContext context;
    context.set_deadline(system_clock::now() + seconds(10));
    EchoRequest request;
    request.set_text("hello fathom " + std::to_string(i));
    EchoReply reply;
    grpc::Status status = stub->Echo(&context, request, &reply);
    ASSERT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
    EXPECT_EQ(reply.text(), request.text());
    EXPECT_EQ(reply.served_before(), i);
  }
  server->Shutdown();
  server->Wait();
}

TEST(GrpcLoopbackTest, CallToStoppedServerIsUnavailable) {
  EchoService service;
  int port = 0;
  std::unique_ptr<grpc::Server> server = StartServer(&service, &port);
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);
  server->Shutdown();
  server->Wait();
  server.reset();

  // Without wait_for_ready, a refused connection fails the call at once rather than at the deadline.
  std::unique_ptr<Echo::Stub> stub = StubFor(port);
  grpc::ClientContext context;
  const auto deadline = system_clock::now() + seconds(10);
  context.set_deadline(deadline);
  EchoRequest request;
  request.set_text("anyone there?");
  EchoReply reply;
  grpc::Status status = stub->Echo(&context, request, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_LT(system_clock::now(), deadline);
}

}  // namespace
}  // namespace fathom::test
