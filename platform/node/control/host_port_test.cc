// Listen and target addresses: what parses, what is refused, and why a failed listen failed.
#include "platform/node/control/host_port.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace fathom::control {
namespace {

TEST(HostPortTest, Parses) {
  absl::StatusOr<HostPort> v4 = ParseHostPort("127.0.0.1:7000", PortZero::kRefused);
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 7000);

  absl::StatusOr<HostPort> v6 = ParseHostPort("[::1]:0", PortZero::kAllowed);
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);

  absl::StatusOr<HostPort> name = ParseHostPort("node-7.example.com:65535", PortZero::kRefused);
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(name->port, 65535);
}

TEST(HostPortTest, RefusesBadAddresses) {
  for (const char* bad : {"", "localhost", ":7000", "host:", "host:port", "host:-1", "host:65536", "host:123456",
                          "::1:7000", "[::1:7000", "[]:7000", "[host]:7000", "a b:7000", "a/b:7000",
                          "dns:///host:7000"}) {
    absl::StatusOr<HostPort> parsed = ParseHostPort(bad, PortZero::kAllowed);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << "'" << bad << "'";
  }
  EXPECT_EQ(ParseHostPort("127.0.0.1:0", PortZero::kRefused).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HostPortTest, JoinHostPortBracketsIpv6) {
  EXPECT_EQ(JoinHostPort("::1", 80), "[::1]:80");
  EXPECT_EQ(JoinHostPort("127.0.0.1", 80), "127.0.0.1:80");
}

TEST(HostPortTest, ExplainsAPortInUse) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);

  absl::Status why = ExplainListenFailure({"127.0.0.1", ntohs(address.sin_port)});
  EXPECT_EQ(why.code(), absl::StatusCode::kFailedPrecondition) << why;
  EXPECT_NE(why.message().find("Address already in use"), absl::string_view::npos) << why;
  close(fd);
}

TEST(HostPortTest, ExplainsAForeignOrUnknownHost) {
  // 192.0.2.0/24 is TEST-NET-1: never an address of this machine.
  EXPECT_EQ(ExplainListenFailure({"192.0.2.1", 0}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExplainListenFailure({"no-such-host.invalid", 0}).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fathom::control
