// Join over loopback: the round trip, the handler's errors, malformed requests (rejected before the
// handler), and malformed replies (rejected by the client).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "gtest/gtest.h"
#include "platform/fabric/fabric.h"
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

bool SameMessage(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

class ControlJoinTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(TestServerOptions()); }

  void StartServer(const ControlServerOptions& options) {
    absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(options, &handler_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    absl::StatusOr<std::unique_ptr<ControlClient>> client = ControlClient::Create(TestClientOptions(server_->port()));
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  FakeControlHandler handler_{SampleNodeInfo(/*node_id=*/2, /*peer_node_id=*/1)};
  std::unique_ptr<ControlServer> server_;
  std::unique_ptr<ControlClient> client_;
};

TEST_F(ControlJoinTest, RoundTrip) {
  const NodeInfo mine = SampleNodeInfo(/*node_id=*/1, /*peer_node_id=*/2);
  absl::StatusOr<NodeInfo> theirs = client_->Join(mine);
  ASSERT_TRUE(theirs.ok()) << theirs.status();
  EXPECT_TRUE(SameMessage(*theirs, SampleNodeInfo(2, 1))) << theirs->DebugString();
  EXPECT_EQ(handler_.join_calls(), 1);
  EXPECT_TRUE(SameMessage(handler_.last_join().caller(), mine)) << handler_.last_join().DebugString();
  EXPECT_EQ(server_->counters().handled, 1u);
  EXPECT_EQ(server_->counters().rejected_invalid, 0u);
}

TEST_F(ControlJoinTest, HandlerErrorReachesTheCallerWithItsCode) {
  handler_.FailJoinsWith(absl::FailedPreconditionError("node 1 is already a member"));
  absl::StatusOr<NodeInfo> theirs = client_->Join(SampleNodeInfo(1, 2));
  EXPECT_EQ(theirs.status().code(), absl::StatusCode::kFailedPrecondition) << theirs.status();
  EXPECT_NE(theirs.status().message().find("node 1 is already a member"), absl::string_view::npos);
  EXPECT_NE(theirs.status().message().find("Control.Join to 127.0.0.1:"), absl::string_view::npos);
}

struct Malformed {
  const char* name;
  std::function<void(NodeInfo&)> spoil;
  const char* message;
};

TEST_F(ControlJoinTest, MalformedRequestsAreInvalidArgumentAndNeverReachTheHandler) {
  const std::vector<Malformed> cases = {
      {"node id 0", [](NodeInfo& n) { n.set_node_id(0); }, "caller.node_id"},
      {"wrong cluster", [](NodeInfo& n) { n.set_cluster_name("someone-else"); }, "caller.cluster_name"},
      {"wrong protocol", [](NodeInfo& n) { n.set_protocol_version(kControlProtocolVersion + 1); },
       "caller.protocol_version"},
      {"oversize address", [](NodeInfo& n) { n.set_worker_addresses(0, std::string(kMaxFabricAddressBytes + 1, 'a')); },
       "caller.worker_addresses[0]"},
      {"oversize ring location", [](NodeInfo& n) { n.mutable_rings(0)->set_location(std::string(4096, 'r')); },
       "caller.rings[0].location"},
      {"corrupted descriptor byte",
       [](NodeInfo& n) { (*n.mutable_regions(1)->mutable_region_descriptor())[30] ^= 0x01; },
       "caller.regions[1].region_descriptor"},
  };
  for (const Malformed& bad : cases) {
    SCOPED_TRACE(bad.name);
    NodeInfo info = SampleNodeInfo(1, 2);
    bad.spoil(info);
    absl::StatusOr<NodeInfo> reply = client_->Join(info);
    EXPECT_EQ(reply.status().code(), absl::StatusCode::kInvalidArgument) << reply.status();
    EXPECT_NE(reply.status().message().find(bad.message), absl::string_view::npos) << reply.status();
  }
  EXPECT_EQ(handler_.total_calls(), 0);
  EXPECT_EQ(server_->counters().rejected_invalid, cases.size());
  EXPECT_EQ(server_->counters().handled, 0u);
}

TEST_F(ControlJoinTest, RequestWithoutCallerIsInvalid) {
  auto stub = Control::NewStub(grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.AddMetadata(std::string(kTokenMetadataKey), kTestToken);
  JoinResponse response;
  grpc::Status status = stub->Join(&context, JoinRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(handler_.join_calls(), 0);
}

TEST_F(ControlJoinTest, MessageOverTheSizeLimitIsRefusedBeforeTheHandler) {
  ControlServerOptions options = TestServerOptions();
  options.limits.max_message_bytes = 64 << 10;
  StartServer(options);
  NodeInfo info = SampleNodeInfo(1, 2);
  for (int i = 0; i < 100; ++i) info.mutable_rings(0)->mutable_location()->append(1000, 'r');
  absl::StatusOr<NodeInfo> reply = client_->Join(info);
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kResourceExhausted) << reply.status();
  EXPECT_EQ(handler_.total_calls(), 0);
}

TEST_F(ControlJoinTest, ClientRejectsAMalformedReply) {
  NodeInfo bad_descriptor = SampleNodeInfo(2, 1);
  (*bad_descriptor.mutable_regions(0)->mutable_region_descriptor())[8] ^= 0x10;
  handler_.ReplyWith(bad_descriptor);
  absl::StatusOr<NodeInfo> reply = client_->Join(SampleNodeInfo(1, 2));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kInvalidArgument) << reply.status();
  EXPECT_NE(reply.status().message().find("bad reply: callee.regions[0].region_descriptor"), absl::string_view::npos)
      << reply.status();

  NodeInfo other_cluster = SampleNodeInfo(2, 1);
  other_cluster.set_cluster_name("elsewhere");
  handler_.ReplyWith(other_cluster);
  reply = client_->Join(SampleNodeInfo(1, 2));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kInvalidArgument) << reply.status();
  EXPECT_NE(reply.status().message().find("callee.cluster_name"), absl::string_view::npos) << reply.status();
}

}  // namespace
}  // namespace fathom::control
