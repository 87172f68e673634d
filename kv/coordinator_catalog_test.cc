// Table names kept in the coordinator's configuration: a table created on one node of a coordinated
// embedded cluster is opened by name on another, through that node's own coordinator; names are unique;
// drop removes the name; a descriptor with a bad kind is an error, not a crash; a resize publishes the
// new generation there and a handle on another node follows it.
#include "kv/coordinator_catalog.h"

#include "gtest/gtest.h"
#include "kv/kv.h"
#include "platform/base/status_test_macros.h"
#include "txn/testing/txn_cluster.h"

namespace fathom::kv {
namespace {

TEST(CoordinatorCatalogTest, TablesAreFoundByNameFromEveryNode) {
  server::EmbeddedClusterOptions options;
  options.nodes = 3;
  options.coordinated = true;
  options.memory_bytes = 8 << 20;
  ASSERT_OK_AND_ASSIGN(auto cluster, txn::testing::TxnCluster::Start(options));
  CoordinatorCatalog catalog1(cluster->cluster().coordinator(1));
  CoordinatorCatalog catalog3(cluster->cluster().coordinator(3));

  ASSERT_OK_AND_ASSIGN(Table created, Table::Create(cluster->service(1), catalog1, "users", {.buckets = 64}));
  ASSERT_OK(created.Put("alice", "31"));
  EXPECT_TRUE(absl::IsAlreadyExists(Table::Create(cluster->service(2), catalog1, "users").status()));

  // The configuration reaches node 3's coordinator asynchronously.
  absl::StatusOr<Table> opened = absl::NotFoundError("not yet");
  for (int i = 0; i < 200 && !opened.ok(); ++i) {
    opened = Table::Open(cluster->service(3), catalog3, "users");
    if (!opened.ok()) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_OK(opened.status());
  ASSERT_OK_AND_ASSIGN(std::string value, opened->Get("alice"));
  EXPECT_EQ(value, "31");
  ASSERT_OK_AND_ASSIGN(std::vector<TableInfo> tables, catalog1.List());
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].name, "users");
  ASSERT_OK_AND_ASSIGN(TableInfo seen_by_3, catalog3.Find("users"));
  EXPECT_EQ(tables[0].root, seen_by_3.root);
  EXPECT_EQ(tables[0].kind, IndexKind::kHopscotch);

  // A cuckoo table: its kind is in the descriptor, and node 3 opens it as cuckoo.
  ASSERT_OK_AND_ASSIGN(Table cuckoo, Table::Create(cluster->service(1), catalog1, "cuckoo",
                                                   {.kind = IndexKind::kCuckoo, .buckets = 64}));
  ASSERT_OK(cuckoo.Put("bob", "42"));
  absl::StatusOr<Table> cuckoo3 = absl::NotFoundError("not yet");
  for (int i = 0; i < 200 && !cuckoo3.ok(); ++i) {
    cuckoo3 = Table::Open(cluster->service(3), catalog3, "cuckoo");
    if (!cuckoo3.ok()) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_OK(cuckoo3.status());
  EXPECT_EQ(cuckoo3->kind(), IndexKind::kCuckoo);
  ASSERT_OK_AND_ASSIGN(std::string bob, cuckoo3->Get("bob"));
  EXPECT_EQ(bob, "42");
  ASSERT_OK_AND_ASSIGN(TableInfo cuckoo_info, catalog3.Find("cuckoo"));
  EXPECT_EQ(cuckoo_info.kind, IndexKind::kCuckoo);
  ASSERT_OK(Table::Drop(cluster->service(1), catalog1, "cuckoo"));

  // A resize publishes the new generation in the configuration (epoch + 1); node 3's handle, still on
  // the old one, is rejected and refetches through its own coordinator (which may lag: it waits).
  ASSERT_OK_AND_ASSIGN(TableInfo before, catalog1.Find("users"));
  ASSERT_OK(Table::Resize(cluster->service(1), catalog1, "users", {.grace = absl::ZeroDuration()}));
  ASSERT_OK_AND_ASSIGN(TableInfo after, catalog1.Find("users"));
  EXPECT_EQ(after.epoch, before.epoch + 1);
  EXPECT_FALSE(after.root == before.root);
  EXPECT_EQ(opened->epoch(), before.epoch);
  ASSERT_OK_AND_ASSIGN(std::string moved, opened->Get("alice"));
  EXPECT_EQ(moved, "31");
  EXPECT_EQ(opened->epoch(), after.epoch);
  EXPECT_EQ(opened->buckets(), 128u);
  // Publishing is a compare-and-set on the descriptor.
  EXPECT_TRUE(absl::IsFailedPrecondition(catalog1.Replace(before, after)));
  TableInfo unknown = after;
  unknown.name = "nobody";
  EXPECT_TRUE(absl::IsNotFound(catalog1.Replace(after, unknown)));

  ASSERT_OK(Table::Drop(cluster->service(1), catalog1, "users"));
  EXPECT_TRUE(absl::IsNotFound(catalog1.Find("users").status()));
  EXPECT_TRUE(absl::IsNotFound(catalog1.Remove("users")));

  // A descriptor nobody can read is reported, never used.
  ASSERT_OK(cluster->cluster()
                .coordinator(1)
                ->Update([](coordinator::Configuration& config) {
                  coordinator::TableDescriptor* t = config.add_tables();
                  t->set_name("odd");
                  t->set_kind(static_cast<coordinator::TableKind>(9));
                  return absl::OkStatus();
                })
                .status());
  EXPECT_TRUE(absl::IsDataLoss(catalog1.Find("odd").status()));
}

}  // namespace
}  // namespace fathom::kv
