// Starting a server and creating a client: the chosen port is reported, and every way to get the set-up
// wrong (busy port, bad address, bad options, unreadable TLS files) is a clear error at start.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "platform/node/control/control_client.h"
#include "platform/node/control/control_server.h"
#include "platform/node/control/testing/control_test_env.h"
#include "platform/node/control/testing/fake_control_handler.h"

namespace fathom::control {
namespace {

using testing::FakeControlHandler;
using testing::SampleNodeInfo;
using testing::TestClientOptions;
using testing::TestServerOptions;
using testing::WriteTestFile;

bool Contains(const absl::Status& status, const std::string& text) {
  return status.message().find(text) != absl::string_view::npos;
}

class ControlServerStartTest : public ::testing::Test {
 protected:
  absl::Status StartWith(const ControlServerOptions& options) {
    return ControlServer::Start(options, &handler_).status();
  }
  FakeControlHandler handler_{SampleNodeInfo(2, 1)};
};

TEST_F(ControlServerStartTest, ReportsTheChosenPort) {
  absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(TestServerOptions(), &handler_);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_GT((*server)->port(), 0);
  EXPECT_EQ((*server)->address(), absl::StrCat("127.0.0.1:", (*server)->port()));
  EXPECT_FALSE((*server)->tls());
}

TEST_F(ControlServerStartTest, PortHeldByAnotherServerIsAClearError) {
  absl::StatusOr<std::unique_ptr<ControlServer>> first = ControlServer::Start(TestServerOptions(), &handler_);
  ASSERT_TRUE(first.ok()) << first.status();
  ControlServerOptions options = TestServerOptions();
  options.listen_address = (*first)->address();
  absl::Status second = StartWith(options);
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition) << second;
  EXPECT_TRUE(Contains(second, (*first)->address())) << second;
  EXPECT_TRUE(Contains(second, "Address already in use")) << second;

  // The first server is unharmed.
  absl::StatusOr<std::unique_ptr<ControlClient>> client = ControlClient::Create(TestClientOptions((*first)->port()));
  ASSERT_TRUE(client.ok());
  EXPECT_TRUE((*client)->Stats().ok());
}

TEST_F(ControlServerStartTest, PortHeldByAPlainSocketIsAClearError) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);

  ControlServerOptions options = TestServerOptions();
  options.listen_address = absl::StrCat("127.0.0.1:", ntohs(address.sin_port));
  absl::Status status = StartWith(options);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_TRUE(Contains(status, "Address already in use")) << status;
  close(fd);
}

TEST_F(ControlServerStartTest, BadListenAddressesAreInvalidArgument) {
  for (const char* bad : {"", "localhost", "127.0.0.1:65536", "127.0.0.1:http", "[::1:0", "::1:0",
                          "no-such-host.invalid:0", "192.0.2.1:0"}) {
    ControlServerOptions options = TestServerOptions();
    options.listen_address = bad;
    absl::Status status = StartWith(options);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << "'" << bad << "': " << status;
  }
}

TEST_F(ControlServerStartTest, BadOptionsAreInvalidArgument) {
  EXPECT_EQ(ControlServer::Start(TestServerOptions(), nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  ControlServerOptions options = TestServerOptions();
  options.cluster_name = "";
  EXPECT_EQ(StartWith(options).code(), absl::StatusCode::kInvalidArgument);
  options = TestServerOptions();
  options.protocol_version = 0;
  EXPECT_EQ(StartWith(options).code(), absl::StatusCode::kInvalidArgument);
  options = TestServerOptions();
  options.fabric_kind = static_cast<fabric::FabricKind>(9);
  EXPECT_EQ(StartWith(options).code(), absl::StatusCode::kInvalidArgument);
  options = TestServerOptions();
  options.max_threads = 1;
  EXPECT_EQ(StartWith(options).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ControlServerStartTest, TlsFileProblemsAreClearErrors) {
  const char* directory = std::getenv("TEST_TMPDIR");
  ASSERT_NE(directory, nullptr);
  absl::StatusOr<std::string> empty = WriteTestFile("empty.pem", "");
  absl::StatusOr<std::string> not_pem = WriteTestFile("not.pem", "just some text\n");
  absl::StatusOr<std::string> cert_like = WriteTestFile(
      "cert.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  ASSERT_TRUE(empty.ok() && not_pem.ok() && cert_like.ok());
  const std::string missing = absl::StrCat(directory, "/no-such-file.pem");

  struct Case {
    std::string certificate, key;
    absl::StatusCode code;
    std::string mention;
  };
  const Case cases[] = {
      {missing, *cert_like, absl::StatusCode::kNotFound, missing},
      {*cert_like, missing, absl::StatusCode::kNotFound, missing},
      {*cert_like, "", absl::StatusCode::kInvalidArgument, "both"},
      {"", *cert_like, absl::StatusCode::kInvalidArgument, "both"},
      {*empty, *cert_like, absl::StatusCode::kInvalidArgument, "is empty"},
      {*not_pem, *cert_like, absl::StatusCode::kInvalidArgument, "no PEM block"},
      {*cert_like, *cert_like, absl::StatusCode::kInvalidArgument, "PRIVATE KEY"},  // a key file without a key
      {directory, *cert_like, absl::StatusCode::kFailedPrecondition, "cannot read TLS certificate"},  // EISDIR
  };
  for (const Case& c : cases) {
    ControlServerOptions options = TestServerOptions();
    options.tls = {c.certificate, c.key};
    absl::Status status = StartWith(options);
    EXPECT_EQ(status.code(), c.code) << c.certificate << " / " << c.key << ": " << status;
    EXPECT_TRUE(Contains(status, c.mention)) << status;
  }
}

TEST(ControlClientCreateTest, BadOptionsAreClearErrors) {
  ControlClientOptions options = TestClientOptions(1);
  options.target = "127.0.0.1:0";
  EXPECT_EQ(ControlClient::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.target = "nonsense";
  EXPECT_EQ(ControlClient::Create(options).status().code(), absl::StatusCode::kInvalidArgument);

  options = TestClientOptions(1);
  options.call_timeout = absl::ZeroDuration();
  EXPECT_EQ(ControlClient::Create(options).status().code(), absl::StatusCode::kInvalidArgument);

  options = TestClientOptions(1);
  options.tls_server_name = "localhost";  // without a CA: TLS is off, so the name would be ignored
  EXPECT_EQ(ControlClient::Create(options).status().code(), absl::StatusCode::kInvalidArgument);

  options = TestClientOptions(1);
  options.tls_ca_path = "/no/such/ca.pem";
  absl::Status status = ControlClient::Create(options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_TRUE(Contains(status, "/no/such/ca.pem")) << status;
}

TEST(ControlClientCreateTest, NobodyListeningIsUnavailable) {
  // Take a free port and release it, so nothing listens there.
  FakeControlHandler handler(SampleNodeInfo(2, 1));
  int port = 0;
  {
    absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(TestServerOptions(), &handler);
    ASSERT_TRUE(server.ok());
    port = (*server)->port();
  }
  absl::StatusOr<std::unique_ptr<ControlClient>> client = ControlClient::Create(TestClientOptions(port));
  ASSERT_TRUE(client.ok()) << client.status();
  absl::Status status = (*client)->Stats().status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_TRUE(Contains(status, absl::StrCat("Control.Stats to 127.0.0.1:", port))) << status;
}

}  // namespace
}  // namespace fathom::control
