// The RESP gateway against a cluster in this process (fathom::Client::StartEmbedded, UCX shared memory),
// spoken to over real sockets as redis-cli would: the data commands, transactions (MULTI/EXEC, WATCH),
// AUTH, and bad input that closes only its own connection.
#include "resp/gateway_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"

namespace fathom::resp {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A blocking RESP2 client: sends commands as arrays and renders replies as text: "+OK", "-ERR ...", ":3",
// "v" for a bulk, "(nil)", "[a,b]" for an array, "(closed)" if the server closed the connection.
class RespClient {
 public:
  explicit RespClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RespClient() { close(fd_); }

  void SendRaw(const std::string& bytes) { (void)!send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL); }
  void Send(const std::vector<std::string>& words) {
    std::string bytes = absl::StrCat("*", words.size(), "\r\n");
    for (const std::string& w : words) absl::StrAppend(&bytes, "$", w.size(), "\r\n", w, "\r\n");
    SendRaw(bytes);
  }
  std::string Call(const std::vector<std::string>& words) {
    Send(words);
    return Reply();
  }
  std::string Reply() {
    std::string line;
    if (!Line(line)) return "(closed)";
    const char type = line[0];
    const std::string rest = line.substr(1);
    if (type == '+' || type == '-') return line;
    if (type == ':') return line;
    int64_t n = 0;
    if (!absl::SimpleAtoi(rest, &n)) return "(bad reply: " + line + ")";
    if (type == '$') {
      if (n < 0) return "(nil)";
      std::string data;
      if (!Bytes(static_cast<size_t>(n) + 2, data)) return "(closed)";
      return data.substr(0, static_cast<size_t>(n));
    }
    if (type == '*') {
      if (n < 0) return "(nil array)";
      std::string out = "[";
      for (int64_t i = 0; i < n; ++i) absl::StrAppend(&out, i > 0 ? "," : "", Reply());
      return out + "]";
    }
    return "(bad reply: " + line + ")";
  }
  bool connected() const { return connected_; }

 private:
  bool Fill() {
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) return false;
    buffer_.append(buffer, static_cast<size_t>(n));
    return true;
  }
  bool Line(std::string& line) {
    size_t end;
    while ((end = buffer_.find("\r\n")) == std::string::npos) {
      if (!Fill()) return false;
    }
    line = buffer_.substr(0, end);
    buffer_.erase(0, end + 2);
    return true;
  }
  bool Bytes(size_t n, std::string& data) {
    while (buffer_.size() < n) {
      if (!Fill()) return false;
    }
    data = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

class GatewayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto client = Client::StartEmbedded({.nodes = 3});
    ASSERT_OK(client.status());
    client_ = client->release();
    auto table = client_->OpenOrCreateTable("redis");
    ASSERT_OK(table.status());
    table_ = new Table(*table);
  }
  static void TearDownTestSuite() {
    delete table_;
    delete client_;
  }
  void Start(const std::string& password = "", size_t max_clients = 100) {
    context_.client = client_;
    context_.table = table_;
    context_.password = password;
    context_.stats = &stats_;
    context_.key_locks = &key_locks_;
    GatewayOptions options;
    options.port = 0;
    options.max_clients = max_clients;
    ASSERT_OK_AND_ASSIGN(server_, GatewayServer::Start(options, context_));
  }
  int port() const { return server_->port(); }

  static Client* client_;
  static Table* table_;
  GatewayStats stats_;
  KeyLocks key_locks_;
  SessionContext context_;
  std::unique_ptr<GatewayServer> server_;
};

Client* GatewayTest::client_ = nullptr;
Table* GatewayTest::table_ = nullptr;

TEST_F(GatewayTest, StringCommandsBehaveAsInRedis) {
  Start();
  RespClient c(port());
  ASSERT_TRUE(c.connected());
  EXPECT_EQ(c.Call({"PING"}), "+PONG");
  EXPECT_EQ(c.Call({"ping", "hi"}), "hi");
  EXPECT_EQ(c.Call({"SET", "s:k", "v"}), "+OK");
  EXPECT_EQ(c.Call({"get", "s:k"}), "v");
  EXPECT_EQ(c.Call({"GET", "s:missing"}), "(nil)");
  EXPECT_EQ(c.Call({"SET", "s:bin", std::string("a\r\n\0b", 5)}), "+OK");
  EXPECT_EQ(c.Call({"GET", "s:bin"}), std::string("a\r\n\0b", 5));
  EXPECT_EQ(c.Call({"EXISTS", "s:k", "s:missing", "s:k"}), ":2");
  EXPECT_EQ(c.Call({"MSET", "s:a", "1", "s:b", "2"}), "+OK");
  EXPECT_EQ(c.Call({"MGET", "s:a", "s:missing", "s:b"}), "[1,(nil),2]");
  EXPECT_EQ(c.Call({"INCR", "s:a"}), ":2");
  EXPECT_EQ(c.Call({"INCRBY", "s:a", "-5"}), ":-3");
  EXPECT_EQ(c.Call({"DECR", "s:new"}), ":-1");
  EXPECT_EQ(c.Call({"GET", "s:a"}), "-3");
  EXPECT_EQ(c.Call({"INCR", "s:k"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(c.Call({"SET", "s:max", "9223372036854775807"}), "+OK");
  EXPECT_EQ(c.Call({"INCR", "s:max"}), "-ERR increment or decrement would overflow");
  EXPECT_EQ(c.Call({"DEL", "s:a", "s:b", "s:missing"}), ":2");
  EXPECT_EQ(c.Call({"DEL", "s:a"}), ":0");
  EXPECT_EQ(c.Call({"GET", "s:a"}), "(nil)");
  // What the gateway does not do, it says.
  EXPECT_EQ(c.Call({"GET"}), "-ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(c.Call({"MSET", "s:a", "1", "s:b"}), "-ERR wrong number of arguments for 'mset' command");
  EXPECT_THAT(c.Call({"SET", "s:k", "v", "EX", "10"}), StartsWith("-ERR SET options"));
  EXPECT_EQ(c.Call({"SET", "s:k", ""}), "-ERR Fathom stores no empty values");
  EXPECT_EQ(c.Call({"FLUSHALL"}), "-ERR unknown command 'FLUSHALL'");
  EXPECT_EQ(c.Call({"SELECT", "1"}), "-ERR DB index is out of range (the gateway has one database, 0)");
  EXPECT_EQ(c.Call({"GET", "s:k"}), "v");  // unchanged by the refused SETs
  EXPECT_THAT(c.Call({"INFO"}), HasSubstr("fathom_table:redis"));
  EXPECT_EQ(c.Call({"CONFIG", "GET", "appendonly"}), "[appendonly,no]");
  EXPECT_EQ(c.Call({"QUIT"}), "+OK");
  EXPECT_EQ(c.Reply(), "(closed)");
}

TEST_F(GatewayTest, PipelinedCommandsAreAnsweredInOrder) {
  Start();
  RespClient c(port());
  std::string bytes;
  for (int i = 0; i < 200; ++i) {
    absl::StrAppend(&bytes, "*3\r\n$3\r\nSET\r\n$", absl::StrCat("p:", i).size(), "\r\np:", i, "\r\n$",
                    absl::StrCat(i).size(), "\r\n", i, "\r\n*2\r\n$3\r\nGET\r\n$", absl::StrCat("p:", i).size(),
                    "\r\np:", i, "\r\n");
  }
  c.SendRaw(bytes);
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(c.Reply(), "+OK") << i;
    ASSERT_EQ(c.Reply(), absl::StrCat(i)) << i;
  }
}

TEST_F(GatewayTest, MultiExecIsOneTransactionAndWatchAbortsOnAChange) {
  Start();
  RespClient a(port()), b(port());
  EXPECT_EQ(a.Call({"MULTI"}), "+OK");
  EXPECT_EQ(a.Call({"SET", "m:x", "1"}), "+QUEUED");
  EXPECT_EQ(a.Call({"INCR", "m:x"}), "+QUEUED");
  EXPECT_EQ(a.Call({"GET", "m:x"}), "+QUEUED");
  EXPECT_EQ(b.Call({"GET", "m:x"}), "(nil)");  // nothing yet
  EXPECT_EQ(a.Call({"EXEC"}), "[+OK,:2,2]");
  EXPECT_EQ(b.Call({"GET", "m:x"}), "2");

  // A WATCHed key changed by another client: EXEC does nothing and answers a null array.
  EXPECT_EQ(a.Call({"WATCH", "m:x"}), "+OK");
  EXPECT_EQ(b.Call({"SET", "m:x", "changed"}), "+OK");
  EXPECT_EQ(a.Call({"MULTI"}), "+OK");
  EXPECT_EQ(a.Call({"SET", "m:y", "should-not-be-set"}), "+QUEUED");
  EXPECT_EQ(a.Call({"EXEC"}), "(nil array)");
  EXPECT_EQ(b.Call({"GET", "m:y"}), "(nil)");
  // Unchanged: it runs (and the WATCH ends with EXEC).
  EXPECT_EQ(a.Call({"WATCH", "m:x"}), "+OK");
  EXPECT_EQ(a.Call({"MULTI"}), "+OK");
  EXPECT_EQ(a.Call({"SET", "m:y", "set"}), "+QUEUED");
  EXPECT_EQ(a.Call({"EXEC"}), "[+OK]");
  EXPECT_EQ(b.Call({"GET", "m:y"}), "set");

  // A command that cannot be queued discards the whole transaction at EXEC.
  EXPECT_EQ(a.Call({"MULTI"}), "+OK");
  EXPECT_EQ(a.Call({"SET", "m:z", "1"}), "+QUEUED");
  EXPECT_EQ(a.Call({"GET"}), "-ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(a.Call({"EXEC"}), "-EXECABORT Transaction discarded because of previous errors.");
  EXPECT_EQ(a.Call({"GET", "m:z"}), "(nil)");
  EXPECT_EQ(a.Call({"MULTI"}), "+OK");
  EXPECT_EQ(a.Call({"MULTI"}), "-ERR MULTI calls can not be nested");
  EXPECT_EQ(a.Call({"WATCH", "m:x"}), "-ERR WATCH inside MULTI is not allowed");
  EXPECT_EQ(a.Call({"DISCARD"}), "+OK");
  EXPECT_EQ(a.Call({"EXEC"}), "-ERR EXEC without MULTI");
  EXPECT_EQ(a.Call({"DISCARD"}), "-ERR DISCARD without MULTI");
}

TEST_F(GatewayTest, ConcurrentIncrementsThroughManyConnectionsAreNotLost) {
  Start();
  constexpr int kClients = 8, kEach = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([this] {
      RespClient c(port());
      for (int i = 0; i < kEach; ++i) {
        const std::string reply = c.Call({"INCR", "c:counter"});
        ASSERT_EQ(reply[0], ':') << reply;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  RespClient c(port());
  EXPECT_EQ(c.Call({"GET", "c:counter"}), absl::StrCat(kClients * kEach));
}

TEST_F(GatewayTest, AuthWithTheTokenComesFirst) {
  Start("the-cluster-token");
  RespClient c(port());
  EXPECT_EQ(c.Call({"GET", "a:k"}), "-NOAUTH Authentication required.");
  EXPECT_EQ(c.Call({"AUTH", "wrong"}), "-WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_EQ(c.Call({"AUTH", "someone", "the-cluster-token"}),
            "-WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_EQ(c.Call({"AUTH", "default", "the-cluster-token"}), "+OK");
  EXPECT_EQ(c.Call({"GET", "a:k"}), "(nil)");
  RespClient other(port());
  EXPECT_EQ(other.Call({"SET", "a:k", "v"}), "-NOAUTH Authentication required.");
  EXPECT_EQ(other.Call({"AUTH", "the-cluster-token"}), "+OK");
  EXPECT_EQ(other.Call({"SET", "a:k", "v"}), "+OK");
}

TEST_F(GatewayTest, BadInputClosesOnlyItsConnection) {
  Start();
  RespClient good(port());
  EXPECT_EQ(good.Call({"SET", "b:k", "v"}), "+OK");
  for (const std::string& bad : {std::string("*1\r\n$-5\r\n"), std::string("*2\r\n$3\r\nGET\r\n:1\r\n"),
                                 std::string("*1\r\n$999999999999\r\n"), std::string("*x\r\n")}) {
    RespClient liar(port());
    liar.SendRaw(bad);
    EXPECT_THAT(liar.Reply(), StartsWith("-ERR Protocol error")) << bad;
    EXPECT_EQ(liar.Reply(), "(closed)") << bad;
  }
  // A bulk that says it is longer than it is, then the client goes away: nothing is run.
  {
    RespClient truncated(port());
    truncated.SendRaw("*3\r\n$3\r\nSET\r\n$3\r\nb:k\r\n$100\r\nshort");
  }
  EXPECT_EQ(good.Call({"GET", "b:k"}), "v");
  EXPECT_EQ(stats_.protocol_errors.load(), 4u);
}

TEST_F(GatewayTest, ConnectionsPastTheLimitAreToldSo) {
  Start("", /*max_clients=*/2);
  RespClient one(port()), two(port());
  EXPECT_EQ(one.Call({"PING"}), "+PONG");
  EXPECT_EQ(two.Call({"PING"}), "+PONG");
  RespClient three(port());
  EXPECT_EQ(three.Reply(), "-ERR max number of clients reached");
  EXPECT_EQ(three.Reply(), "(closed)");
  EXPECT_EQ(one.Call({"QUIT"}), "+OK");
  EXPECT_EQ(one.Reply(), "(closed)");
  // A place is free again once the first connection ended.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (stats_.connected.load() > 1) {
    ASSERT_LT(absl::Now(), deadline);
    absl::SleepFor(absl::Milliseconds(5));
  }
  RespClient four(port());
  EXPECT_EQ(four.Call({"PING"}), "+PONG");
}

}  // namespace
}  // namespace fathom::resp
