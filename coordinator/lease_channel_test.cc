#include "coordinator/lease_channel.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "platform/base/mutex.h"
#include "platform/node/control/host_port.h"

namespace fathom::coordinator {
namespace {

using Inbound = LeaseChannel::Inbound;

std::unique_ptr<LeaseChannel> OpenOrDie(uint32_t node, LeaseChannel::Handler handler) {
  auto channel = LeaseChannel::Open("127.0.0.1", node, std::move(handler));
  EXPECT_TRUE(channel.ok()) << channel.status();
  return channel.ok() ? std::move(*channel) : nullptr;
}

// Whether `done` holds within a generous deadline (polled: the channels' threads make it true).
bool Eventually(const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

// Sends raw bytes to `address` from a socket of its own.
void SendRaw(const std::string& address, const std::string& bytes) {
  absl::StatusOr<control::HostPort> parsed = control::ParseHostPort(address, control::PortZero::kRefused);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* to = nullptr;
  ASSERT_EQ(getaddrinfo(parsed->host.c_str(), absl::StrCat(parsed->port).c_str(), &hints, &to), 0);
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(sendto(fd, bytes.data(), bytes.size(), 0, to->ai_addr, to->ai_addrlen), static_cast<ssize_t>(bytes.size()));
  close(fd);
  freeaddrinfo(to);
}

TEST(LeaseChannelTest, ACallGetsTheAnswerOfTheNodeItAsked) {
  // Written on the server's thread; the reply travels through the kernel, which TSan does not see.
  absl::Mutex mu;
  std::string seen_source;
  uint32_t seen_sender = 0;
  auto server = OpenOrDie(3, [&](const Inbound& in) -> std::optional<std::string> {
    MutexLock lock(&mu);
    seen_source = in.source;
    seen_sender = in.sender;
    return absl::StrCat("granted:", std::string(in.payload));
  });
  auto client = OpenOrDie(7, [](const Inbound&) { return std::nullopt; });
  ASSERT_NE(server, nullptr);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(server->address().rfind("127.0.0.1:", 0), 0u) << server->address();
  auto reply = client->Call(server->address(), 3, "renew me", absl::Seconds(30));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, "granted:renew me");
  MutexLock lock(&mu);
  EXPECT_EQ(seen_sender, 7u);
  EXPECT_EQ(seen_source, client->address());
  EXPECT_EQ(server->counters().requests_answered, 1u);
  EXPECT_EQ(client->counters().calls, 1u);
}

TEST(LeaseChannelTest, NoAnswerIsADeadlineAndAReplyFromAnotherNodeIsNotTaken) {
  auto silent = OpenOrDie(3, [](const Inbound&) { return std::nullopt; });
  auto client = OpenOrDie(7, [](const Inbound&) { return std::nullopt; });
  auto reply = client->Call(silent->address(), 3, "x", absl::Milliseconds(50));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded) << reply.status();
  // The request it chose not to answer (its thread may run after the caller gave up, on a loaded machine).
  EXPECT_TRUE(Eventually([&] { return silent->counters().dropped == 1; }));

  // Node 3 answers, but the caller expects node 4 at that address: the reply is dropped, never taken.
  auto answering = OpenOrDie(3, [](const Inbound&) { return std::optional<std::string>("yes"); });
  reply = client->Call(answering->address(), 4, "x", absl::Milliseconds(200));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded) << reply.status();
  EXPECT_TRUE(Eventually([&] { return client->counters().dropped == 1; }));
  EXPECT_EQ(client->counters().calls_timed_out, 2u);
}

TEST(LeaseChannelTest, MalformedDatagramsAreDroppedAndTheChannelKeepsAnswering) {
  std::atomic<int> handled = 0;
  auto server = OpenOrDie(3, [&](const Inbound&) -> std::optional<std::string> {
    ++handled;
    return "ok";
  });
  const std::string good = EncodeLeaseDatagram({LeaseDatagramKind::kRequest, 7, 1, "payload"});
  std::string bad_format = good, bad_kind = good, bad_reserved = good, bad_sender = good, big_sender = good;
  bad_format[0] = 2;
  bad_kind[1] = 3;
  bad_reserved[3] = 1;
  bad_sender[4] = bad_sender[5] = bad_sender[6] = bad_sender[7] = 0;
  big_sender[6] = 1;  // node 65543
  const std::string bad[] = {"", good.substr(0, kLeaseDatagramHeaderBytes - 1), bad_format, bad_kind,
                             bad_reserved, bad_sender, big_sender,
                             good + std::string(kLeaseDatagramMaxPayload, 'x')};
  for (const std::string& bytes : bad) {
    EXPECT_FALSE(DecodeLeaseDatagram(bytes).ok()) << bytes.size();
    SendRaw(server->address(), bytes);
  }
  // A reply nobody asked for is dropped too.
  SendRaw(server->address(), EncodeLeaseDatagram({LeaseDatagramKind::kReply, 7, 99, "grant"}));
  auto client = OpenOrDie(7, [](const Inbound&) { return std::nullopt; });
  auto reply = client->Call(server->address(), 3, "still there?", absl::Seconds(30));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, "ok");
  EXPECT_EQ(handled.load(), 1);
  // Datagrams from one sender arrive in order on loopback: all nine were handled before the call.
  EXPECT_EQ(server->counters().dropped, 9u);
}

TEST(LeaseChannelTest, DatagramsRoundTripAndAddressesMustBeNumeric) {
  const LeaseDatagram d{LeaseDatagramKind::kReply, 65535, 0x0123456789abcdefULL, std::string(24, 'g')};
  auto decoded = DecodeLeaseDatagram(EncodeLeaseDatagram(d));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->kind, d.kind);
  EXPECT_EQ(decoded->sender, d.sender);
  EXPECT_EQ(decoded->call_id, d.call_id);
  EXPECT_EQ(decoded->payload, d.payload);

  auto client = OpenOrDie(7, [](const Inbound&) { return std::nullopt; });
  for (const std::string address : {"localhost:1", "127.0.0.1", "127.0.0.1:", ":5", "1.2.3.4:port"}) {
    EXPECT_EQ(client->Call(address, 3, "x", absl::Seconds(1)).status().code(), absl::StatusCode::kInvalidArgument)
        << address;
  }
  EXPECT_FALSE(LeaseChannel::Open("not-an-ip", 1, [](const Inbound&) { return std::nullopt; }).ok());
}

}  // namespace
}  // namespace fathom::coordinator
