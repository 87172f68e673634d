// The memcached and Redis backends against real servers started on free loopback ports.
#include <atomic>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "bench/ycsb/memcached_backend.h"
#include "bench/ycsb/redis_backend.h"
#include "bench/ycsb/server_process.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

struct Server {
  std::unique_ptr<ServerProcess> process;
  std::unique_ptr<Backend> backend;
};

Server StartServer(const std::string& kind) {
  Server server;
  absl::StatusOr<std::unique_ptr<ServerProcess>> process =
      kind == "redis" ? ServerProcess::StartRedis()
                      : ServerProcess::StartMemcached("/usr/bin/memcached", kind == "memcached_large_pages");
  EXPECT_TRUE(process.ok()) << process.status();
  if (!process.ok()) return server;
  server.process = std::move(process).value();
  if (kind == "redis") {
    server.backend = std::make_unique<RedisBackend>("127.0.0.1", server.process->port());
  } else {
    server.backend = std::make_unique<MemcachedBackend>("127.0.0.1", server.process->port());
  }
  absl::Status init = server.backend->Init();
  EXPECT_TRUE(init.ok()) << init;
  return server;
}

class ServerBackendTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ServerBackendTest, CrudKeepsFieldsAndReportsMissingKeys) {
  Server server = StartServer(GetParam());
  ASSERT_NE(server.backend, nullptr);
  Backend& db = *server.backend;
  const Record record = {{"field0", "zero"}, {"field1", "one"}, {"field2", std::string("b\0n", 3)}};
  ASSERT_TRUE(db.Insert("usertable", "user1", record).ok());

  Record out;
  ASSERT_TRUE(db.Read("usertable", "user1", nullptr, &out).ok());
  EXPECT_EQ(out, record);
  const FieldList one_field = {"field1"};
  ASSERT_TRUE(db.Read("usertable", "user1", &one_field, &out).ok());
  EXPECT_EQ(out, (Record{{"field1", "one"}}));

  // An update changes the named fields and keeps the rest.
  ASSERT_TRUE(db.Update("usertable", "user1", {{"field1", "uno"}}).ok());
  ASSERT_TRUE(db.Read("usertable", "user1", nullptr, &out).ok());
  EXPECT_EQ(out, (Record{{"field0", "zero"}, {"field1", "uno"}, {"field2", std::string("b\0n", 3)}}));

  EXPECT_EQ(db.Read("usertable", "nobody", nullptr, &out).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(db.Delete("usertable", "user1").ok());
  EXPECT_EQ(db.Read("usertable", "user1", nullptr, &out).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(db.Delete("usertable", "user1").code(), absl::StatusCode::kNotFound);
}

// The memory figure the comparison quotes per record: it grows with what the server holds.
TEST_P(ServerBackendTest, MemoryUsedGrowsWithTheData) {
  Server server = StartServer(GetParam());
  ASSERT_NE(server.backend, nullptr);
  auto memory_used = [&]() -> absl::StatusOr<ServerMemory> {
    if (GetParam() == "redis") return static_cast<RedisBackend&>(*server.backend).MemoryUsed();
    return static_cast<MemcachedBackend&>(*server.backend).MemoryUsed();
  };
  absl::StatusOr<ServerMemory> before = memory_used();
  ASSERT_TRUE(before.ok()) << before.status();
  const Record record = {{"field0", std::string(1000, 'x')}};
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(server.backend->Insert("usertable", absl::StrCat("user", i), record).ok());
  absl::StatusOr<ServerMemory> after = memory_used();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_GE(after->taken, before->taken + 5000 * 1000) << "before " << before->taken;
  EXPECT_LT(after->taken, before->taken + 5000 * 4000) << "before " << before->taken;  // not some other figure
  if (GetParam() == "redis") {  // used_memory, both ways
    EXPECT_EQ(after->allocated, static_cast<int64_t>(after->taken));
  } else {
    EXPECT_EQ(after->allocated, -1);  // memcached reports no such figure
  }

  server.process.reset();  // a dead server: an error, not a number
  EXPECT_FALSE(memory_used().ok());
}

TEST_P(ServerBackendTest, DeadServerGivesErrorsNotCrashes) {
  Server server = StartServer(GetParam());
  ASSERT_NE(server.backend, nullptr);
  const int port = server.process->port();
  server.process->Stop();
  Record out;
  for (int i = 0; i < 3; ++i) {  // the first call finds the dropped connection, later ones fail to reconnect
    const absl::Status status = server.backend->Read("usertable", "user1", nullptr, &out);
    EXPECT_EQ(ReturnCodeOf(status), ReturnCode::kError) << status;
    EXPECT_EQ(ReturnCodeOf(server.backend->Insert("usertable", "user1", {{"f", "v"}})), ReturnCode::kError);
  }
  // A fresh backend pointed at the dead port fails Init with a clear error.
  std::unique_ptr<Backend> fresh;
  if (GetParam() == "redis") {
    fresh = std::make_unique<RedisBackend>("127.0.0.1", port);
  } else {
    fresh = std::make_unique<MemcachedBackend>("127.0.0.1", port);
  }
  EXPECT_FALSE(fresh->Init().ok());
}

INSTANTIATE_TEST_SUITE_P(Backends, ServerBackendTest,
                         ::testing::Values("redis", "memcached", "memcached_large_pages"),
                         [](const auto& info) { return info.param; });

TEST(RedisBackendTest, ScanWalksTheHashCodeIndex) {
  Server server = StartServer("redis");
  ASSERT_NE(server.backend, nullptr);
  for (const char* key : {"user1", "user2", "user3", "user4"}) {
    ASSERT_TRUE(server.backend->Insert("usertable", key, {{"key", key}}).ok());
  }
  // Java's "user1".hashCode() is below "user2"'s (they differ in the last character), so a scan from
  // user2 returns user2, user3, user4 in that order, and a limit cuts it.
  EXPECT_LT(JavaStringHashCode("user1"), JavaStringHashCode("user2"));
  std::vector<Record> out;
  ASSERT_TRUE(server.backend->Scan("usertable", "user2", 10, nullptr, &out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].at("key"), "user2");
  EXPECT_EQ(out[2].at("key"), "user4");
  ASSERT_TRUE(server.backend->Scan("usertable", "user1", 2, nullptr, &out).ok());
  EXPECT_EQ(out.size(), 2u);
}

TEST(RedisBackendTest, ConcurrentTransfersConserveTheTotal) {
  // Four clients move money among five accounts: WATCH/MULTI/EXEC must retry, never lose an update.
  Server server = StartServer("redis");
  ASSERT_NE(server.backend, nullptr);
  constexpr int kAccounts = 5;
  for (int a = 0; a < kAccounts; ++a) {
    ASSERT_TRUE(server.backend->Insert("t", absl::StrCat("acct", a), {{kBalanceField, "100"}, {"f", "x"}}).ok());
  }
  std::vector<std::thread> clients;
  std::atomic<int> failures{0};
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      RedisBackend db("127.0.0.1", server.process->port());
      if (!db.Init().ok()) return failures.fetch_add(1), void();
      for (int i = 0; i < 200; ++i) {
        const int from = (c + i) % kAccounts;
        const int to = (c + 2 * i + 1) % kAccounts;
        if (from == to) continue;
        if (!db.Transfer("t", absl::StrCat("acct", from), absl::StrCat("acct", to), 1 + i % 7).ok()) failures++;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);
  int64_t total = 0;
  for (int a = 0; a < kAccounts; ++a) {
    Record record;
    ASSERT_TRUE(server.backend->Read("t", absl::StrCat("acct", a), nullptr, &record).ok());
    EXPECT_EQ(record.at("f"), "x");  // the other fields stay
    total += std::stoll(record.at(kBalanceField));
  }
  EXPECT_EQ(total, kAccounts * 100);
  // A missing account or one without a balance is an error, and nothing changes.
  EXPECT_EQ(ReturnCodeOf(server.backend->Transfer("t", "acct0", "nobody", 1)), ReturnCode::kNotFound);
  // (HMGET cannot tell a record without the field from no record: NotFound.)
  ASSERT_TRUE(server.backend->Insert("t", "plain", {{"f", "y"}}).ok());
  Record before, after;
  ASSERT_TRUE(server.backend->Read("t", "acct0", nullptr, &before).ok());
  EXPECT_FALSE(server.backend->Transfer("t", "plain", "acct0", 1).ok());
  ASSERT_TRUE(server.backend->Read("t", "acct0", nullptr, &after).ok());
  EXPECT_EQ(before, after);
}

TEST(RedisBackendTest, JavaHashCodeMatchesJava) {
  EXPECT_EQ(JavaStringHashCode(""), 0);
  EXPECT_EQ(JavaStringHashCode("a"), 97);
  EXPECT_EQ(JavaStringHashCode("hello"), 99162322);                       // "hello".hashCode()
  EXPECT_EQ(JavaStringHashCode("user6284781860667377211"), -594971599);  // wraps negative
}

TEST(MemcachedBackendTest, ScanAndTransferAreNotImplemented) {
  Server server = StartServer("memcached");
  ASSERT_NE(server.backend, nullptr);
  std::vector<Record> out;
  EXPECT_EQ(ReturnCodeOf(server.backend->Scan("usertable", "user1", 10, nullptr, &out)), ReturnCode::kNotImplemented);
  EXPECT_EQ(ReturnCodeOf(server.backend->Transfer("usertable", "user1", "user2", 5)), ReturnCode::kNotImplemented);
}

// Writes `value` under `key` with memcached's text protocol, bypassing the record encoding.
bool PlantRawValue(int port, const std::string& key, const std::string& value) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return false;
  }
  const std::string command = "set " + key + " 0 0 " + std::to_string(value.size()) + "\r\n" + value + "\r\n";
  bool ok = write(fd, command.data(), command.size()) == static_cast<ssize_t>(command.size());
  char reply[64] = {};
  ok = ok && read(fd, reply, sizeof reply - 1) > 0 && std::string(reply).rfind("STORED", 0) == 0;
  close(fd);
  return ok;
}

TEST(MemcachedBackendTest, ForeignValueIsAnErrorNotACrash) {
  Server server = StartServer("memcached");
  ASSERT_NE(server.backend, nullptr);
  ASSERT_TRUE(PlantRawValue(server.process->port(), "user1", "{\"field0\": \"json, as YCSB's binding writes\"}"));
  Record out;
  const absl::Status read = server.backend->Read("usertable", "user1", nullptr, &out);
  EXPECT_EQ(read.code(), absl::StatusCode::kDataLoss) << read;
  EXPECT_EQ(ReturnCodeOf(read), ReturnCode::kError);
  EXPECT_EQ(ReturnCodeOf(server.backend->Update("usertable", "user1", {{"f", "v"}})), ReturnCode::kError);
}

}  // namespace
}  // namespace fathom::ycsb
