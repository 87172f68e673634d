#include "fathom/cluster_file.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "tests/util/fresh_dir.h"

namespace fathom {
namespace {

using ::testing::HasSubstr;

TEST(ClusterFileTest, WhatClusterShWritesIsRead) {
  ASSERT_OK_AND_ASSIGN(ClientOptions options, ParseClusterFile("# written by tools/cluster.sh start\n"
                                                               "zk=127.0.0.1:2181\n"
                                                               "\n"
                                                               "cluster = local\n"
                                                               "token_file=/tmp/c/token\n"
                                                               "transports=tcp\n"
                                                               "lease_period=200ms\n",
                                                               "/tmp/c"));
  EXPECT_EQ(options.zookeeper, "127.0.0.1:2181");
  EXPECT_EQ(options.cluster, "local");
  EXPECT_EQ(options.token_file, "/tmp/c/token");
  EXPECT_TRUE(options.tcp);
  EXPECT_EQ(options.lease_period, absl::Milliseconds(200));
  ASSERT_OK_AND_ASSIGN(options, ParseClusterFile("zk=h:1\ncluster=c\ntoken_file=token\ntransports=sm", "/run/x"));
  EXPECT_EQ(options.token_file, "/run/x/token");
  EXPECT_FALSE(options.tcp);
  EXPECT_EQ(options.tls_ca_file, "");
  // A cluster.sh --tls cluster: the CA and the clients' certificate beside the file.
  ASSERT_OK_AND_ASSIGN(options, ParseClusterFile("zk=h:1\ncluster=c\ntls_ca=tls/ca.crt\ntls_cert=/etc/n.crt\n"
                                                 "tls_key=tls/node.key\n",
                                                 "/run/x"));
  EXPECT_EQ(options.tls_ca_file, "/run/x/tls/ca.crt");
  EXPECT_EQ(options.tls_cert_file, "/etc/n.crt");
  EXPECT_EQ(options.tls_key_file, "/run/x/tls/node.key");
}

TEST(ClusterFileTest, AnythingUnexpectedIsRefusedNamingTheLine) {
  const struct {
    std::string text;
    std::string says;
  } cases[] = {
      {"zk=h:1\ncluster=c\nport=3\n", "line 3: unknown key 'port'"},
      {"zk=h:1\nzk=h:2\ncluster=c\n", "line 2: zk is given twice"},
      {"zk=h:1\ncluster\n", "line 2: expected key=value"},
      {"zk=\ncluster=c\n", "line 1: zk has no value"},
      {"zk=h:1\ncluster=c\nlease_period=soon\n", "line 3: lease_period 'soon'"},
      {"zk=h:1\ncluster=c\nlease_period=-1s\n", "line 3: lease_period '-1s'"},
      {"cluster=c\n", "needs zk= and cluster="},
      {"zk=h:1\ncluster=c\ntls_ca=ca.crt\n", "all of tls_ca, tls_cert and tls_key, or none"},
      {"zk=h:1\ncluster=c\ntls_cert=n.crt\ntls_key=n.key\n", "all of tls_ca, tls_cert and tls_key, or none"},
      {"", "needs zk= and cluster="},
      {std::string(70000, '#'), "at most 65536"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<ClientOptions> options = ParseClusterFile(c.text, "/d");
    ASSERT_FALSE(options.ok()) << c.text.substr(0, 80);
    EXPECT_TRUE(absl::IsInvalidArgument(options.status()));
    EXPECT_THAT(std::string(options.status().message()), HasSubstr(c.says));
  }
}

TEST(ClusterFileTest, ReadFromDiskWithTheTokenBesideIt) {
  const std::string dir = testing::FreshTestDir("cluster_file_test", "disk");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/cluster") << "zk=127.0.0.1:9\ncluster=local\ntoken_file=token\n";
  ASSERT_OK_AND_ASSIGN(ClientOptions options, ReadClusterFile(dir + "/cluster"));
  EXPECT_EQ(options.token_file, dir + "/token");
  EXPECT_TRUE(absl::IsNotFound(ReadClusterFile(dir + "/missing").status()));
  std::ofstream(dir + "/bad") << "zk=127.0.0.1:9\n";
  const absl::Status bad = ReadClusterFile(dir + "/bad").status();
  EXPECT_THAT(std::string(bad.message()), HasSubstr(dir + "/bad: "));
}

}  // namespace
}  // namespace fathom
