// Shared fixtures for control service tests: a valid NodeInfo, server and client options that agree,
// and a file helper.
//
//   FakeControlHandler handler(SampleNodeInfo(/*node_id=*/2));
//   ASSIGN_OR_RETURN(auto server, ControlServer::Start(TestServerOptions(), &handler));
//   ASSIGN_OR_RETURN(auto client, ControlClient::Create(TestClientOptions(server->port())));
//   ASSIGN_OR_RETURN(NodeInfo peer, client->Join(SampleNodeInfo(/*node_id=*/1)));
#ifndef FATHOM_PLATFORM_NODE_CONTROL_TESTING_CONTROL_TEST_ENV_H_
#define FATHOM_PLATFORM_NODE_CONTROL_TESTING_CONTROL_TEST_ENV_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "platform/node/control/control.pb.h"
#include "platform/node/control/control_client.h"
#include "platform/node/control/control_server.h"

namespace fathom::control::testing {

inline constexpr char kTestCluster[] = "test-cluster";
inline constexpr char kTestToken[] = "test-token-0123456789abcdef";

// A NodeInfo every default TestServerOptions() server accepts: sim fabric, two workers with valid
// address envelopes, two regions with valid descriptors, and a ring per worker of node `peer_node_id`.
NodeInfo SampleNodeInfo(uint32_t node_id, uint32_t peer_node_id = 1);

// Loopback, port 0, kTestCluster, kTestToken, sim fabric, plaintext, a short stop grace.
ControlServerOptions TestServerOptions();
// To 127.0.0.1:port with kTestToken, plaintext, a 10 s call timeout.
ControlClientOptions TestClientOptions(int port);

// Writes `contents` to a new file under the test's temporary directory and returns its path.
absl::StatusOr<std::string> WriteTestFile(std::string_view name, std::string_view contents);

}  // namespace fathom::control::testing

#endif  // FATHOM_PLATFORM_NODE_CONTROL_TESTING_CONTROL_TEST_ENV_H_
