// The decision of transaction recovery, on made-up holds over a 3-node placement: node 1's region (1 <<
// 16 | 1) backed up by node 2, node 2's by node 3, node 3's by node 1.
#include "txn/recovery_decision.h"

#include "gtest/gtest.h"

namespace fathom::txn {
namespace {

constexpr uint32_t kOne = (1u << 16) | 1;
constexpr uint32_t kTwo = (2u << 16) | 1;
constexpr uint32_t kThree = (3u << 16) | 1;

memory::RegionMap Placement(bool three_promoted_to_one = false, bool two_filling_at_one = false) {
  absl::flat_hash_map<uint32_t, memory::RegionReplicas> regions;
  regions[kOne] = {1, {2}, 1 << 20, {}};
  regions[kTwo] = {2, {3}, 1 << 20, {}};
  regions[kThree] = {3, {1}, 1 << 20, {}};
  if (three_promoted_to_one) regions[kThree] = {1, {2}, 1 << 20, {2}};
  if (two_filling_at_one) regions[kTwo] = {2, {3, 1}, 1 << 20, {1}};
  return memory::RegionMap::Placed(5, {1, 2, 3}, 1, regions);
}

Holder H(uint32_t node, HoldKind kind, std::vector<uint32_t> regions, std::vector<uint32_t> written = {}) {
  return Holder{node, kind, std::move(regions), std::move(written)};
}

TEST(RecoveryDecisionTest, LocksWithoutRecordsAbort) {
  EXPECT_EQ(DecideOrphan({H(1, HoldKind::kLocked, {kOne}), H(2, HoldKind::kLocked, {kTwo})}, Placement()),
            Verdict::kAbort);
}

TEST(RecoveryDecisionTest, EveryBackupHoldingItsRecordCommits) {
  const std::vector<Holder> complete = {H(1, HoldKind::kLocked, {kOne}), H(2, HoldKind::kLocked, {kTwo}),
                                        H(2, HoldKind::kRecord, {kOne}), H(3, HoldKind::kRecord, {kTwo})};
  EXPECT_EQ(DecideOrphan(complete, Placement()), Verdict::kCommit);
  // One backup missing its record (not sent yet, or its ABORT came first): abort.
  std::vector<Holder> partial = complete;
  partial.pop_back();
  EXPECT_EQ(DecideOrphan(partial, Placement()), Verdict::kAbort);
}

TEST(RecoveryDecisionTest, AnInstalledPrimaryCommits) {
  EXPECT_EQ(DecideOrphan({H(1, HoldKind::kCommitted, {kOne}), H(2, HoldKind::kLocked, {kTwo}),
                          H(3, HoldKind::kRecord, {kTwo})},
                         Placement()),
            Verdict::kCommit);
}

TEST(RecoveryDecisionTest, AnEarlierDecisionStands) {
  // Aborted at one holder: abort, whatever the others hold.
  EXPECT_EQ(DecideOrphan({H(1, HoldKind::kAborted, {}), H(2, HoldKind::kLocked, {kTwo}),
                          H(2, HoldKind::kRecord, {kOne}), H(3, HoldKind::kRecord, {kTwo})},
                         Placement()),
            Verdict::kAbort);
  // A backup record marked committed: commit.
  EXPECT_EQ(DecideOrphan({H(2, HoldKind::kCommitted, {kOne}), H(1, HoldKind::kLocked, {kOne})}, Placement()),
            Verdict::kCommit);
}

TEST(RecoveryDecisionTest, RecordsWithoutLocksCommitOnlyIfTruncatedSomewhereOrHeldByEveryPrimary) {
  const std::vector<uint32_t> written = {kOne, kTwo};
  // Every primary installed it and the truncation reached node 1 (its tombstone, or its coordinator's
  // mark there) but not node 3, which still holds its record.
  EXPECT_EQ(DecideOrphan({H(3, HoldKind::kRecord, {kTwo}, written), H(1, HoldKind::kTruncated, {})}, Placement()),
            Verdict::kCommit);
  // Without that: node 2, region two's primary, is alive and holds nothing of it, neither installed nor
  // truncated: the abort reached it (its ABORT went after the one to node 3 was first tried).
  EXPECT_EQ(DecideOrphan({H(3, HoldKind::kRecord, {kTwo}, written)}, Placement()), Verdict::kAbort);
  // Node 3, coordinator and primary of region three, died; node 1, promoted, holds the record. Written
  // only there: every written region's current primary holds it, commit. Written to region two as well,
  // whose primary (node 2, alive) holds nothing of it: abort.
  EXPECT_EQ(DecideOrphan({H(1, HoldKind::kRecord, {kThree}, {kThree})}, Placement(/*three_promoted_to_one=*/true)),
            Verdict::kCommit);
  EXPECT_EQ(DecideOrphan({H(1, HoldKind::kRecord, {kThree}, {kTwo, kThree}), H(3, HoldKind::kRecord, {kTwo},
                                                                                {kTwo, kThree})},
                         Placement(/*three_promoted_to_one=*/true)),
            Verdict::kAbort);
}

TEST(RecoveryDecisionTest, TruncatedAnywhereCommits) {
  // Locks at a primary whose COMMIT-PRIMARY never arrived, while a replica applied it at truncation:
  // committed (truncation follows every COMMIT-PRIMARY's write).
  EXPECT_EQ(DecideOrphan({H(2, HoldKind::kLocked, {kTwo}), H(1, HoldKind::kTruncated, {})}, Placement()),
            Verdict::kCommit);
  // But an earlier recovery's abort stands.
  EXPECT_EQ(DecideOrphan({H(2, HoldKind::kAborted, {}), H(1, HoldKind::kTruncated, {})}, Placement()),
            Verdict::kAbort);
}

TEST(RecoveryDecisionTest, APromotedPrimaryCountsWithItsRecordAndAFillingBackupDoesNot) {
  // Node 3 (coordinator and primary of its region) died: node 1 is its region's primary now, node 2 a
  // new backup still filling. Node 1 holds the record as the old backup.
  const std::vector<Holder> holds = {H(1, HoldKind::kRecord, {kThree}), H(2, HoldKind::kLocked, {kTwo}),
                                     H(3, HoldKind::kRecord, {kTwo})};
  EXPECT_EQ(DecideOrphan(holds, Placement(/*three_promoted_to_one=*/true)), Verdict::kCommit);
  // A primary promoted before the transaction ran holds its locks: it can install it.
  EXPECT_EQ(DecideOrphan({H(2, HoldKind::kLocked, {kTwo}), H(3, HoldKind::kRecord, {kTwo}),
                          H(1, HoldKind::kLocked, {kThree})},
                         Placement(/*three_promoted_to_one=*/true)),
            Verdict::kCommit);
  // The current primary holds nothing of that region (it never got the record): abort.
  EXPECT_EQ(DecideOrphan({H(2, HoldKind::kLocked, {kTwo}), H(3, HoldKind::kRecord, {kTwo}),
                          H(2, HoldKind::kLocked, {kThree})},
                         Placement(/*three_promoted_to_one=*/true)),
            Verdict::kAbort);
  // A filling backup (node 1 of node 2's region) need not hold the record.
  EXPECT_EQ(DecideOrphan({H(2, HoldKind::kLocked, {kTwo}), H(3, HoldKind::kRecord, {kTwo})},
                         Placement(false, /*two_filling_at_one=*/true)),
            Verdict::kCommit);
}

// Node 3 died with the coordinator: its region's backup, node 1, is its primary now and never got the
// record. No survivor holds anything of region three, but the records list it as written: it is not
// complete, so the transaction aborts (no COMMIT-PRIMARY can have gone out without node 1's record).
TEST(RecoveryDecisionTest, AWrittenRegionNoSurvivorHoldsAnythingOfIsIncomplete) {
  const std::vector<uint32_t> written = {kTwo, kThree};
  EXPECT_EQ(DecideOrphan({H(2, HoldKind::kLocked, {kTwo}, written), H(3, HoldKind::kRecord, {kTwo}, written)},
                         Placement(/*three_promoted_to_one=*/true)),
            Verdict::kAbort);
  // The same holds, had node 1 got its record: complete.
  EXPECT_EQ(DecideOrphan({H(2, HoldKind::kLocked, {kTwo}, written), H(3, HoldKind::kRecord, {kTwo}, written),
                          H(1, HoldKind::kRecord, {kThree}, written)},
                         Placement(/*three_promoted_to_one=*/true)),
            Verdict::kCommit);
}

}  // namespace
}  // namespace fathom::txn
