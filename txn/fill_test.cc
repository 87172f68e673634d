// FILL (data recovery, message 109) is refused unless it is well formed, comes from the region's primary as
// its own record, and the receiver is listed as filling the region: bad bytes and lying senders change
// nothing in the backup's copy.
#include <string>

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "txn/records.h"
#include "txn/testing/txn_cluster.h"

namespace fathom::txn {
namespace {

class FillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(cluster_,
                         testing::TxnCluster::Start(testing::TestClusterOptions(testing::TestFabric::kShm, 1)));
  }
  // A FILL record of node `sender` writing one object of `region`.
  static Record Fill(uint32_t sender, uint32_t region) {
    Record record;
    record.kind = RecordKind::kCommitBackup;
    record.id = TxnId{1, sender, 0, 0};
    WriteEntry entry;
    entry.ref = object::ObjectRef{memory::GlobalAddress{region, 0}, 1, 64};
    entry.version = 7;
    entry.payload = "filled";
    record.entries.push_back(entry);
    record.written_regions = {region};
    return record;
  }
  absl::Status Send(uint32_t from, uint32_t to, const std::string& bytes) {
    return cluster_->cluster().node(from).Call(to, kFillMessage, bytes).status();
  }
  uint32_t RegionOf(uint32_t node) { return cluster_->cluster().node(node).data_regions().front()->id(); }

  std::unique_ptr<testing::TxnCluster> cluster_;
};

TEST_F(FillTest, MalformedOrLyingFillsAreRefusedAndNothingIsApplied) {
  const uint32_t region = RegionOf(2);
  const std::string good = EncodeRecord(Fill(2, region));
  // Truncated, and with bytes after the last entry.
  EXPECT_EQ(Send(2, 1, good.substr(0, good.size() / 2)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Send(2, 1, good + "x").code(), absl::StatusCode::kInvalidArgument);
  // Another node's record, and another record kind.
  EXPECT_EQ(Send(2, 1, EncodeRecord(Fill(3, region))).code(), absl::StatusCode::kInvalidArgument);
  Record lock = Fill(2, region);
  lock.kind = RecordKind::kLock;
  EXPECT_EQ(Send(2, 1, EncodeRecord(lock)).code(), absl::StatusCode::kInvalidArgument);
  // Well formed, but no configuration lists a backup filling the region: not applied anywhere.
  const absl::Status refused = Send(2, 1, good);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_NE(refused.message().find("is not filling"), absl::string_view::npos) << refused;
  // A node that is not the region's primary cannot fill it either.
  EXPECT_EQ(Send(3, 1, EncodeRecord(Fill(3, region))).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_OK_AND_ASSIGN(TxnStats stats, cluster_->service(1).Stats());
  EXPECT_EQ(stats.participant.backup_objects_applied, 0u);
}

}  // namespace
}  // namespace fathom::txn
