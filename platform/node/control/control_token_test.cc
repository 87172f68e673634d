// The cluster token: a call without it, with a wrong one, or with two is PERMISSION_DENIED, changes
// nothing (the handler is never called), and is counted.
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "gtest/gtest.h"
#include "platform/node/control/cluster_token.h"
#include "platform/node/control/control_client.h"
#include "platform/node/control/control_server.h"
#include "platform/node/control/testing/control_test_env.h"
#include "platform/node/control/testing/fake_control_handler.h"

namespace fathom::control {
namespace {

using testing::FakeControlHandler;
using testing::kTestToken;
using testing::SampleNodeInfo;
using testing::TestClientOptions;
using testing::TestServerOptions;

class ControlTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(TestServerOptions(), &handler_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    stub_ = Control::NewStub(grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  }

  std::unique_ptr<ControlClient> ClientWithToken(const std::string& token) {
    ControlClientOptions options = TestClientOptions(server_->port());
    options.cluster_token = token;
    absl::StatusOr<std::unique_ptr<ControlClient>> client = ControlClient::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // Sends all three calls through the raw stub with `tokens` as metadata; expects each to be denied.
  void ExpectAllDeniedWithRawTokens(const std::vector<std::string>& tokens) {
    auto prepare = [&](grpc::ClientContext& context) {
      for (const std::string& token : tokens) context.AddMetadata(std::string(kTokenMetadataKey), token);
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    };
    {
      grpc::ClientContext context;
      prepare(context);
      JoinRequest request;
      *request.mutable_caller() = SampleNodeInfo(1, 2);
      JoinResponse response;
      grpc::Status status = stub_->Join(&context, request, &response);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
    }
    {
      grpc::ClientContext context;
      prepare(context);
      StatsResponse response;
      grpc::Status status = stub_->Stats(&context, StatsRequest(), &response);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
    }
    {
      grpc::ClientContext context;
      prepare(context);
      ShutdownRequest request;
      request.set_reason("let me in");
      ShutdownResponse response;
      grpc::Status status = stub_->Shutdown(&context, request, &response);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
    }
  }

  FakeControlHandler handler_{SampleNodeInfo(2, 1)};
  std::unique_ptr<ControlServer> server_;
  std::unique_ptr<Control::Stub> stub_;
};

TEST_F(ControlTokenTest, MissingTokenIsDeniedForEveryCall) {
  ExpectAllDeniedWithRawTokens({});
  EXPECT_EQ(handler_.total_calls(), 0);
  EXPECT_EQ(server_->counters().rejected_token, 3u);
}

TEST_F(ControlTokenTest, WrongTokenIsDeniedForEveryCall) {
  std::unique_ptr<ControlClient> client = ClientWithToken("not-the-cluster-token");
  ASSERT_NE(client, nullptr);
  absl::StatusOr<NodeInfo> join = client->Join(SampleNodeInfo(1, 2));
  EXPECT_EQ(join.status().code(), absl::StatusCode::kPermissionDenied) << join.status();
  absl::StatusOr<StatsResponse> stats = client->Stats();
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kPermissionDenied) << stats.status();
  absl::Status shutdown = client->Shutdown("go away");
  EXPECT_EQ(shutdown.code(), absl::StatusCode::kPermissionDenied) << shutdown;
  EXPECT_NE(shutdown.message().find("wrong cluster token"), absl::string_view::npos) << shutdown;

  EXPECT_EQ(handler_.total_calls(), 0);
  EXPECT_EQ(server_->counters().rejected_token, 3u);
  EXPECT_EQ(server_->counters().handled, 0u);
}

TEST_F(ControlTokenTest, NearMissesAreDenied) {
  const std::string token = kTestToken;
  ExpectAllDeniedWithRawTokens({token.substr(0, token.size() - 1)});            // a prefix
  ExpectAllDeniedWithRawTokens({token + "x"});                                   // longer
  ExpectAllDeniedWithRawTokens({std::string(token.size(), 'a')});               // same length
  ExpectAllDeniedWithRawTokens({""});                                            // present but empty
  ExpectAllDeniedWithRawTokens({token, "some-other-token-value"});             // two tokens
  EXPECT_EQ(handler_.total_calls(), 0);
  EXPECT_EQ(server_->counters().rejected_token, 15u);
}

// The token is checked first: a caller without it cannot even probe which requests are valid.
TEST_F(ControlTokenTest, TokenIsCheckedBeforeTheRequest) {
  std::unique_ptr<ControlClient> client = ClientWithToken("not-the-cluster-token");
  ASSERT_NE(client, nullptr);
  NodeInfo malformed = SampleNodeInfo(1, 2);
  malformed.set_node_id(0);
  EXPECT_EQ(client->Join(malformed).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(server_->counters().rejected_invalid, 0u);
  EXPECT_EQ(handler_.total_calls(), 0);
}

TEST_F(ControlTokenTest, RightTokenIsAdmitted) {
  std::unique_ptr<ControlClient> client = ClientWithToken(kTestToken);
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->Stats().ok());
  EXPECT_EQ(handler_.stats_calls(), 1);
}

TEST(ControlTokenConfigTest, ServerAndClientRefuseAnUnusableToken) {
  FakeControlHandler handler(SampleNodeInfo(2, 1));
  ControlServerOptions server_options = TestServerOptions();
  server_options.cluster_token = "";
  EXPECT_EQ(ControlServer::Start(server_options, &handler).status().code(), absl::StatusCode::kInvalidArgument);
  server_options.cluster_token = "short";
  EXPECT_EQ(ControlServer::Start(server_options, &handler).status().code(), absl::StatusCode::kInvalidArgument);

  ControlClientOptions client_options = TestClientOptions(1234);
  client_options.cluster_token = "";
  EXPECT_EQ(ControlClient::Create(client_options).status().code(), absl::StatusCode::kInvalidArgument);
  client_options.cluster_token = "has a space in it, which gRPC may trim";
  EXPECT_EQ(ControlClient::Create(client_options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fathom::control
