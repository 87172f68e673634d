#include "platform/metrics/http_endpoint.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "platform/metrics/http_request.h"
#include "platform/metrics/http_test_client.h"

namespace fathom::metrics {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using testing::Exchange;

int Connect(int port) { return testing::ConnectLoopback(port); }

class HttpEndpointTest : public ::testing::Test {
 protected:
  void Start(HttpEndpointOptions options = {}) {
    ASSERT_OK_AND_ASSIGN(endpoint_, HttpEndpoint::Start(options, [this] {
      ++pages_built_;
      return std::string("fathom_up 1\n");
    }));
    ASSERT_GT(endpoint_->port(), 0);
  }
  std::atomic<int> pages_built_{0};
  std::unique_ptr<HttpEndpoint> endpoint_;
};

TEST_F(HttpEndpointTest, ServesThePageAtMetrics) {
  Start();
  const std::string response = Exchange(endpoint_->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(response, HasSubstr("Content-Type: text/plain; version=0.0.4"));
  EXPECT_THAT(response, HasSubstr("Content-Length: 12\r\n"));
  EXPECT_THAT(response, EndsWith("\r\n\r\nfathom_up 1\n"));
  // A query is ignored; HTTP/1.0 and bare LF line ends are fine; HEAD gets the headers only.
  EXPECT_THAT(Exchange(endpoint_->port(), "GET /metrics?x=1 HTTP/1.0\n\n"), EndsWith("fathom_up 1\n"));
  EXPECT_THAT(Exchange(endpoint_->port(), "HEAD /metrics HTTP/1.1\r\n\r\n"), EndsWith("Connection: close\r\n\r\n"));
  EXPECT_EQ(endpoint_->counters().pages, 3);
}

TEST_F(HttpEndpointTest, BadRequestsGetAnAnswerAndTheNextScrapeWorks) {
  Start();
  const int port = endpoint_->port();
  EXPECT_THAT(Exchange(port, "GET / HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 404 Not Found"));
  EXPECT_THAT(Exchange(port, "POST /metrics HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 405 Method Not Allowed"));
  EXPECT_THAT(Exchange(port, "hello\r\n\r\n"), StartsWith("HTTP/1.1 400 Bad Request"));
  EXPECT_THAT(Exchange(port, "GET /metrics HTTP/2.0\r\n\r\n"), StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(Exchange(port, std::string("GET /met\0rics HTTP/1.1\r\n\r\n", 26)), StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(Exchange(port, "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n"),
              StartsWith("HTTP/1.1 431"));
  EXPECT_EQ(pages_built_.load(), 0);
  // A request cut short (the client closes its half before the blank line) gets nothing.
  EXPECT_EQ(Exchange(port, "GET /metrics HTTP/1.1\r\n", /*shut_write=*/true), "");
  EXPECT_THAT(Exchange(port, "GET /metrics HTTP/1.1\r\n\r\n"), EndsWith("fathom_up 1\n"));
  EXPECT_EQ(endpoint_->counters().refused, 6);
  EXPECT_EQ(endpoint_->counters().dropped, 1);
  EXPECT_EQ(endpoint_->counters().pages, 1);
}

TEST_F(HttpEndpointTest, ASilentClientIsDroppedAfterTheReadTimeout) {
  HttpEndpointOptions options;
  options.read_timeout = absl::Milliseconds(200);
  Start(options);
  const int silent = Connect(endpoint_->port());
  ASSERT_GE(silent, 0);
  // Served after the silent one is dropped: the timeout bounds how long one client can hold the endpoint.
  EXPECT_THAT(Exchange(endpoint_->port(), "GET /metrics HTTP/1.1\r\n\r\n"), EndsWith("fathom_up 1\n"));
  char byte;
  EXPECT_EQ(recv(silent, &byte, 1, 0), 0);  // closed without an answer
  close(silent);
  EXPECT_EQ(endpoint_->counters().dropped, 1);
}

TEST(HttpEndpointStartTest, RefusesBadOptionsAndATakenPort) {
  auto page = [] { return std::string(); };
  HttpEndpointOptions options;
  options.port = 70000;
  EXPECT_TRUE(absl::IsInvalidArgument(HttpEndpoint::Start(options, page).status()));
  options.port = 0;
  options.host = "";
  EXPECT_TRUE(absl::IsInvalidArgument(HttpEndpoint::Start(options, page).status()));
  options.host = "no-such-host.invalid";
  EXPECT_TRUE(absl::IsInvalidArgument(HttpEndpoint::Start(options, page).status()));
  options.host = "127.0.0.1";
  ASSERT_OK_AND_ASSIGN(auto first, HttpEndpoint::Start(options, page));
  options.port = first->port();
  const absl::Status taken = HttpEndpoint::Start(options, page).status();
  EXPECT_TRUE(absl::IsUnavailable(taken)) << taken;
  EXPECT_THAT(std::string(taken.message()), HasSubstr("in use"));
}

TEST(HttpRequestTest, ParsesTheRequestLineOnly) {
  RequestLine line;
  EXPECT_EQ(ParseRequest("GET /metrics HTTP/1.1\r\n", line), RequestState::kIncomplete);
  EXPECT_EQ(ParseRequest("GET /metrics HTTP/1.1\r\nA: b\r\n\r\n", line), RequestState::kComplete);
  EXPECT_EQ(line.method, "GET");
  EXPECT_EQ(line.path, "/metrics");
  EXPECT_EQ(ParseRequest("GET  /metrics HTTP/1.1\r\n\r\n", line), RequestState::kMalformed);
  EXPECT_EQ(ParseRequest("get /metrics HTTP/1.1\r\n\r\n", line), RequestState::kMalformed);
  EXPECT_EQ(ParseRequest("GET metrics HTTP/1.1\r\n\r\n", line), RequestState::kMalformed);
  EXPECT_EQ(ParseRequest("\r\n\r\n", line), RequestState::kMalformed);
}

}  // namespace
}  // namespace fathom::metrics
