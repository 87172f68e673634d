// Tables with more chunks of bucket references than a root holds (over 128,000 buckets): the root names
// directories of chunks instead (docs/formats/kv.md). Built by a resize across the boundary, loaded by
// Table::Open and by a node thread's refetch, and dropped.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kv/kv.h"
#include "kv/kv_cluster_test.h"
#include "kv/table_state.h"
#include "platform/base/status_test_macros.h"

namespace fathom::kv {
namespace {

class LargeTableTest : public KvClusterTest {
 protected:
  // Two generations of ~130K 384-byte buckets at once (during the resize), a third on each node, twice.
  uint64_t MemoryBytes() const override { return 192 << 20; }
};

TEST_P(LargeTableTest, ATablePastWhatItsRootHoldsGoesThroughDirectories) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  // 120,000 buckets: 235 chunks, named by the root itself. inline_bytes 24: 384-byte buckets.
  ASSERT_OK_AND_ASSIGN(Table t1, Table::Create(txns(1), catalog_, "big", With({.buckets = 120'000, .inline_bytes = 24})));
  constexpr int kKeys = 300;
  for (int k = 0; k < kKeys; ++k) ASSERT_OK(t1.Put(absl::StrCat("key", k), absl::StrCat("value", k)));
  ASSERT_OK_AND_ASSIGN(TableInfo small, catalog_.Find("big"));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<TableState> before, LoadState(txns(2), small));
  EXPECT_EQ(before->root.directory_levels, 0u);
  EXPECT_EQ(before->chunk_refs.size(), 235u);
  ASSERT_OK_AND_ASSIGN(Table t2, Table::Open(txns(2), catalog_, "big"));  // holds the first generation

  // 140,000 buckets: 274 chunks, more than a root's 250 references: one directory.
  ASSERT_OK(Table::Resize(txns(1), catalog_, "big", {.buckets = 140'000}));
  ASSERT_OK_AND_ASSIGN(TableInfo large, catalog_.Find("big"));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<TableState> after, LoadState(txns(3), large));
  EXPECT_EQ(after->root.directory_levels, 1u);
  EXPECT_EQ(after->root.chunks.size(), 1u);
  EXPECT_EQ(after->chunk_refs.size(), 274u);
  EXPECT_EQ(after->bucket_refs.size(), 140'000u);

  // Node 2's handle refetches the new generation on a node thread (LoadStateAsync, through the directory).
  for (int k = 0; k < kKeys; ++k) {
    GetResult got = GetOnNodeThread(t2, absl::StrCat("key", k), /*node=*/2);
    ASSERT_TRUE(got.value.ok()) << k << ": " << got.value.status();
    EXPECT_EQ(*got.value, absl::StrCat("value", k));
  }
  // Table::Open loads it whole (LoadState), and a put goes to the new buckets.
  ASSERT_OK_AND_ASSIGN(Table t3, Table::Open(txns(3), catalog_, "big"));
  EXPECT_EQ(t3.buckets(), 140'000u);
  ASSERT_OK(t3.Put("after", "resize"));
  EXPECT_EQ(t1.Get("after").value_or("?"), "resize");

  ASSERT_OK(Table::Drop(txns(1), catalog_, "big"));
  EXPECT_TRUE(absl::IsNotFound(catalog_.Find("big").status()));
}

TEST_P(LargeTableTest, MoreBucketsThanDirectoriesCanNameIsRefused) {
  absl::StatusOr<Table> t = Table::Create(txns(1), catalog_, "huge", With({.buckets = 65'536'001}));
  EXPECT_TRUE(absl::IsInvalidArgument(t.status())) << t.status();
  EXPECT_NE(t.status().message().find("65536000"), std::string::npos) << t.status();
}

// One fabric and one index kind: the layout under test is the same for both kinds, and the simulation
// adds only time to building 260,000 buckets.
INSTANTIATE_TEST_SUITE_P(Shm, LargeTableTest,
                         ::testing::Values(FabricAndIndex{txn::testing::TestFabric::kShm, IndexKind::kHopscotch}),
                         FabricAndIndexName);

}  // namespace
}  // namespace fathom::kv
