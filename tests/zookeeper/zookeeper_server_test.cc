#include "tests/zookeeper/zookeeper_server.h"

#include <zookeeper/zookeeper.h>

#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace fathom::testing {
namespace {

void QuietLog(const char*) {}

// A connected client handle, or nullptr after `timeout`.
zhandle_t* Connect(const std::string& hosts, absl::Duration timeout = absl::Seconds(20)) {
  zhandle_t* zh = zookeeper_init2(hosts.c_str(), nullptr, 6000, nullptr, nullptr, 0, QuietLog);
  const absl::Time deadline = absl::Now() + timeout;
  while (zh != nullptr && zoo_state(zh) != ZOO_CONNECTED_STATE && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (zh != nullptr && zoo_state(zh) != ZOO_CONNECTED_STATE) {
    zookeeper_close(zh);
    return nullptr;
  }
  return zh;
}

TEST(ZooKeeperServerTest, ServesStopsRestartsWithDataAndLeavesNoProcess) {
  std::string dir;
  {
    auto zk = ZooKeeperServer::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    dir = (*zk)->dir();
    EXPECT_EQ(CountProcessesMentioning(dir), 1);
    zhandle_t* zh = Connect((*zk)->connect_string());
    ASSERT_NE(zh, nullptr);
    ASSERT_EQ(zoo_create(zh, "/hello", "world", 5, &ZOO_OPEN_ACL_UNSAFE, 0, nullptr, 0), ZOK);

    const int port = (*zk)->port();
    (*zk)->Stop();
    EXPECT_FALSE((*zk)->running());
    EXPECT_EQ(CountProcessesMentioning(dir), 0);
    char buf[16];
    int len = sizeof buf;
    EXPECT_NE(zoo_get(zh, "/hello", 0, buf, &len, nullptr), ZOK);  // no server

    ASSERT_TRUE((*zk)->Restart().ok());
    EXPECT_EQ((*zk)->port(), port);
    // The same client reconnects (same session) and finds the data.
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    int rc = ZCONNECTIONLOSS;
    while (absl::Now() < deadline) {
      len = sizeof buf;
      rc = zoo_get(zh, "/hello", 0, buf, &len, nullptr);
      if (rc == ZOK) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
    ASSERT_EQ(rc, ZOK);
    EXPECT_EQ(std::string(buf, len), "world");
    zookeeper_close(zh);

    (*zk)->Kill();  // a crash keeps committed data too
    ASSERT_TRUE((*zk)->Restart().ok());
    zh = Connect((*zk)->connect_string());
    ASSERT_NE(zh, nullptr);
    len = sizeof buf;
    EXPECT_EQ(zoo_get(zh, "/hello", 0, buf, &len, nullptr), ZOK);
    zookeeper_close(zh);
  }
  // Teardown killed the server and removed its directory.
  EXPECT_EQ(CountProcessesMentioning(dir), 0);
  EXPECT_NE(access(dir.c_str(), F_OK), 0);
}

TEST(ZooKeeperServerTest, TwoServersGetDistinctPorts) {
  auto a = ZooKeeperServer::Start();
  auto b = ZooKeeperServer::Start();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE((*a)->port(), (*b)->port());
}

TEST(ZooKeeperServerTest, AServerThatNeverComesUpGivesTheLogTail) {
  ZooKeeperServerOptions options;
  options.classpath = "/nonexistent/zookeeper.jar";
  const absl::Time start = absl::Now();
  auto zk = ZooKeeperServer::Start(options);
  ASSERT_FALSE(zk.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  EXPECT_NE(zk.status().message().find("exited"), absl::string_view::npos) << zk.status();
  EXPECT_NE(zk.status().message().find("ZooKeeperServerMain"), absl::string_view::npos) << zk.status();
}

TEST(ZooKeeperServerTest, MissingJavaIsAClearError) {
  ZooKeeperServerOptions options;
  options.java = "/nonexistent/java";
  auto zk = ZooKeeperServer::Start(options);
  ASSERT_FALSE(zk.ok());
  EXPECT_EQ(zk.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(zk.status().message().find("/nonexistent/java"), absl::string_view::npos);
}

}  // namespace
}  // namespace fathom::testing
