// The public API on an embedded cluster: tables, keys, errors, and transactions that keep an invariant
// under concurrency.
#include "fathom/client.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"

namespace fathom {
namespace {

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(client_, Client::StartEmbedded({.nodes = 3, .backups = 1})); }
  std::unique_ptr<Client> client_;
};

TEST_F(ClientTest, KeysRoundTripAndMissingOnesAreNotFound) {
  ASSERT_OK_AND_ASSIGN(Table users, client_->CreateTable("users", {.buckets = 64}));
  EXPECT_EQ(users.name(), "users");
  ASSERT_OK(users.Put("alice", "42"));
  ASSERT_OK_AND_ASSIGN(std::string v, users.Get("alice"));
  EXPECT_EQ(v, "42");
  EXPECT_TRUE(absl::IsNotFound(users.Get("bob").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(users.Put("", "x")));
  ASSERT_OK(users.Delete("alice"));
  EXPECT_TRUE(absl::IsNotFound(users.Get("alice").status()));
  EXPECT_TRUE(absl::IsNotFound(users.Delete("alice")));
}

TEST_F(ClientTest, TablesAreCreatedOnceOpenedByNameAndDropped) {
  ASSERT_OK_AND_ASSIGN(Table first, client_->CreateTable("t", {.kind = TableKind::kCuckoo, .buckets = 64}));
  EXPECT_TRUE(absl::IsAlreadyExists(client_->CreateTable("t").status()));
  ASSERT_OK(first.Put("k", "v"));
  ASSERT_OK_AND_ASSIGN(Table again, client_->OpenTable("t"));
  ASSERT_OK_AND_ASSIGN(std::string v, again.Get("k"));
  EXPECT_EQ(v, "v");
  ASSERT_OK_AND_ASSIGN(Table same, client_->OpenOrCreateTable("t"));
  EXPECT_EQ(same.name(), "t");
  EXPECT_TRUE(absl::IsNotFound(client_->OpenTable("nope").status()));
  ASSERT_OK(client_->DropTable("t"));
  EXPECT_TRUE(absl::IsNotFound(client_->OpenTable("t").status()));
}

TEST_F(ClientTest, InlineBytesChooseWhatLivesInTheBucket) {
  // 24 inline bytes: small buckets, every larger key and value in an object of its own.
  ASSERT_OK_AND_ASSIGN(Table t, client_->CreateTable("pointers", {.buckets = 64, .inline_bytes = 24}));
  const std::string big(1000, 'b');
  ASSERT_OK(t.Put("small", "s"));
  ASSERT_OK(t.Put("big", big));
  EXPECT_EQ(t.Get("small").value_or("?"), "s");
  EXPECT_EQ(t.Get("big").value_or("?"), big);
  // The option reaches the table: more than a bucket can hold is refused.
  absl::StatusOr<Table> refused = client_->CreateTable("huge", {.buckets = 64, .inline_bytes = 3000});
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
}

TEST_F(ClientTest, AnErrorFromTheBodyAbortsTheTransaction) {
  ASSERT_OK_AND_ASSIGN(Table t, client_->CreateTable("t", {.buckets = 64}));
  absl::Status s = client_->Transact([&](Transaction& tx) -> absl::Status {
    if (absl::Status put = tx.Put(t, "k", "v"); !put.ok()) return put;
    return absl::FailedPreconditionError("changed my mind");
  });
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_TRUE(absl::IsNotFound(t.Get("k").status()));
  // A value that is not 8 bytes is not an integer.
  ASSERT_OK(t.Put("text", "hello"));
  s = client_->Transact([&](Transaction& tx) -> absl::Status { return tx.GetInt(t, "text").status(); });
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
}

// Transfers between accounts in two tables from four threads: the total never changes, and a
// transaction reads its own writes.
TEST_F(ClientTest, ConcurrentTransfersAcrossTablesKeepTheTotal) {
  ASSERT_OK_AND_ASSIGN(Table checking, client_->CreateTable("checking", {.buckets = 64}));
  ASSERT_OK_AND_ASSIGN(Table savings, client_->CreateTable("savings", {.buckets = 64}));
  constexpr int kAccounts = 8;
  ASSERT_OK(client_->Transact([&](Transaction& tx) -> absl::Status {
    for (int a = 0; a < kAccounts; ++a) {
      if (absl::Status s = tx.PutInt(checking, absl::StrCat("a", a), 100); !s.ok()) return s;
      if (absl::Status s = tx.PutInt(savings, absl::StrCat("a", a), 100); !s.ok()) return s;
    }
    auto own = tx.GetInt(checking, "a0");
    if (!own.ok()) return own.status();
    return *own == 100 ? absl::OkStatus() : absl::InternalError("a transaction did not read its own write");
  }));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const std::string from = absl::StrCat("a", (t + i) % kAccounts), to = absl::StrCat("a", (t * 3 + i) % kAccounts);
        absl::Status s = client_->Transact([&](Transaction& tx) -> absl::Status {
          auto a = tx.GetInt(checking, from);
          if (!a.ok()) return a.status();
          auto b = tx.GetInt(savings, to);
          if (!b.ok()) return b.status();
          if (absl::Status w = tx.PutInt(checking, from, *a - 7); !w.ok()) return w;
          return tx.PutInt(savings, to, *b + 7);
        });
        if (!s.ok()) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  int64_t total = 0;
  ASSERT_OK(client_->Transact([&](Transaction& tx) -> absl::Status {
    total = 0;
    for (int a = 0; a < kAccounts; ++a) {
      for (const Table* table : {&checking, &savings}) {
        auto v = tx.GetInt(*table, absl::StrCat("a", a));
        if (!v.ok()) return v.status();
        total += *v;
      }
    }
    return absl::OkStatus();
  }));
  EXPECT_EQ(total, 2 * kAccounts * 100);
  EXPECT_LT(failures.load(), 200) << "every transfer failed";
}

TEST(ClientOptionsTest, BadOptionsAreRefused) {
  EXPECT_TRUE(absl::IsInvalidArgument(Client::Connect({}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Client::Connect({.zookeeper = "127.0.0.1:1"}).status()));  // no token
  EXPECT_TRUE(absl::IsInvalidArgument(Client::StartEmbedded({.nodes = 1, .backups = 1}).status()));
  // Polling after work: 0 to 1 s, refused before anything is contacted.
  for (absl::Duration poll : {absl::Seconds(2), absl::Microseconds(-1)}) {
    auto polled = Client::Connect({.zookeeper = "127.0.0.1:1", .token = "t", .busy_poll = poll});
    EXPECT_TRUE(absl::IsInvalidArgument(polled.status())) << polled.status();
    EXPECT_THAT(polled.status().message(), testing::HasSubstr("busy_poll"));
  }
}

}  // namespace
}  // namespace fathom
