// TLS: a round trip with a self-signed certificate made at test time; every mismatch (TLS against
// plaintext either way, an untrusted certificate, a wrong server name) fails the call without reaching
// the handler; broken certificate files fail Start.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/node/control/control_client.h"
#include "platform/node/control/control_server.h"
#include "platform/node/control/testing/control_test_env.h"
#include "platform/node/control/testing/fake_control_handler.h"
#include "platform/node/control/testing/self_signed_cert.h"

namespace fathom::control {
namespace {

using ::testing::HasSubstr;

using testing::FakeControlHandler;
using testing::MakeSelfSignedCertificate;
using testing::SampleNodeInfo;
using testing::SelfSignedCertificate;
using testing::TestClientOptions;
using testing::TestServerOptions;
using testing::WriteTestFile;

struct CertificateFiles {
  std::string certificate_path;
  std::string private_key_path;
};

CertificateFiles WriteCertificate(const std::string& name) {
  absl::StatusOr<SelfSignedCertificate> cert = MakeSelfSignedCertificate("localhost");
  EXPECT_TRUE(cert.ok()) << cert.status();
  if (!cert.ok()) return {};
  absl::StatusOr<std::string> cert_path = WriteTestFile(name + ".crt", cert->certificate_pem);
  absl::StatusOr<std::string> key_path = WriteTestFile(name + ".key", cert->private_key_pem);
  EXPECT_TRUE(cert_path.ok() && key_path.ok());
  return {cert_path.value_or(""), key_path.value_or("")};
}

class ControlTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    files_ = WriteCertificate("server");
    ASSERT_FALSE(files_.certificate_path.empty());
  }

  std::unique_ptr<ControlServer> StartServer(bool tls) {
    ControlServerOptions options = TestServerOptions();
    if (tls) options.tls = {files_.certificate_path, files_.private_key_path};
    absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(options, &handler_);
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }

  std::unique_ptr<ControlClient> MakeClient(int port, const std::string& ca_path,
                                            const std::string& server_name = "") {
    ControlClientOptions options = TestClientOptions(port);
    options.tls_ca_path = ca_path;
    options.tls_server_name = server_name;
    absl::StatusOr<std::unique_ptr<ControlClient>> client = ControlClient::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  FakeControlHandler handler_{SampleNodeInfo(2, 1)};
  CertificateFiles files_;
};

TEST_F(ControlTlsTest, RoundTrip) {
  std::unique_ptr<ControlServer> server = StartServer(/*tls=*/true);
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(server->tls());
  // By IP (the certificate lists 127.0.0.1) and by name.
  for (const std::string server_name : {"", "localhost"}) {
    std::unique_ptr<ControlClient> client = MakeClient(server->port(), files_.certificate_path, server_name);
    ASSERT_NE(client, nullptr);
    absl::StatusOr<NodeInfo> theirs = client->Join(SampleNodeInfo(1, 2));
    ASSERT_TRUE(theirs.ok()) << theirs.status();
    EXPECT_EQ(theirs->node_id(), 2u);
    EXPECT_TRUE(client->Stats().ok());
  }
  EXPECT_EQ(handler_.join_calls(), 2);
  EXPECT_EQ(handler_.stats_calls(), 2);
}

TEST_F(ControlTlsTest, TokenIsStillRequired) {
  std::unique_ptr<ControlServer> server = StartServer(/*tls=*/true);
  ASSERT_NE(server, nullptr);
  ControlClientOptions options = TestClientOptions(server->port());
  options.tls_ca_path = files_.certificate_path;
  options.cluster_token = "a-valid-but-wrong-token";
  absl::StatusOr<std::unique_ptr<ControlClient>> client = ControlClient::Create(options);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->Stats().status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(handler_.total_calls(), 0);
}

TEST_F(ControlTlsTest, TlsClientToPlaintextServerFails) {
  std::unique_ptr<ControlServer> server = StartServer(/*tls=*/false);
  ASSERT_NE(server, nullptr);
  std::unique_ptr<ControlClient> client = MakeClient(server->port(), files_.certificate_path);
  ASSERT_NE(client, nullptr);
  absl::Status status = client->Join(SampleNodeInfo(1, 2)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("does it serve plaintext?")) << status;
  EXPECT_EQ(handler_.total_calls(), 0);
}

TEST_F(ControlTlsTest, PlaintextClientToTlsServerFails) {
  std::unique_ptr<ControlServer> server = StartServer(/*tls=*/true);
  ASSERT_NE(server, nullptr);
  std::unique_ptr<ControlClient> client = MakeClient(server->port(), /*ca_path=*/"");
  ASSERT_NE(client, nullptr);
  absl::Status status = client->Join(SampleNodeInfo(1, 2)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("give the CA it chains to")) << status;
  EXPECT_EQ(handler_.total_calls(), 0);
}

TEST_F(ControlTlsTest, UntrustedCertificateFails) {
  std::unique_ptr<ControlServer> server = StartServer(/*tls=*/true);
  ASSERT_NE(server, nullptr);
  const CertificateFiles stranger = WriteCertificate("stranger");
  std::unique_ptr<ControlClient> client = MakeClient(server->port(), stranger.certificate_path);
  ASSERT_NE(client, nullptr);
  absl::Status status = client->Stats().status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_EQ(handler_.total_calls(), 0);
}

TEST_F(ControlTlsTest, WrongServerNameFails) {
  std::unique_ptr<ControlServer> server = StartServer(/*tls=*/true);
  ASSERT_NE(server, nullptr);
  std::unique_ptr<ControlClient> client = MakeClient(server->port(), files_.certificate_path, "node9.example");
  ASSERT_NE(client, nullptr);
  absl::Status status = client->Stats().status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_EQ(handler_.total_calls(), 0);
}

TEST_F(ControlTlsTest, BrokenCertificateFilesFailStart) {
  const CertificateFiles other = WriteCertificate("other");
  absl::StatusOr<std::string> garbage = WriteTestFile(
      "garbage.crt", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  ASSERT_TRUE(garbage.ok());
  struct Case {
    std::string certificate, key;
  };
  // Unparsable certificate; a key that belongs to another certificate.
  for (const Case& c : {Case{*garbage, files_.private_key_path},
                        Case{files_.certificate_path, other.private_key_path}}) {
    ControlServerOptions options = TestServerOptions();
    options.tls = {c.certificate, c.key};
    absl::Status status = ControlServer::Start(options, &handler_).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.certificate << ": " << status;
    EXPECT_NE(status.message().find("TLS is on"), absl::string_view::npos) << status;
  }
}

}  // namespace
}  // namespace fathom::control
