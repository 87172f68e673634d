// A COMMIT-BACKUP counts as one of the f+1 copies once the fabric has put it in the backup's memory, so
// the backup must never refuse it afterwards for a reason of its own. It used to: the backup sized its
// copy of the region through its connection to the region's primary, and refused the record (and could
// not apply it at truncation) when that connection was gone, while the coordinator reported the commit.
// On the replayable simulation, the backup's connection to the primary resets before the commit.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "tests/sim/seeds.h"
#include "tests/sim/sim_cluster.h"
#include "tests/sim/sim_probes.h"
#include "txn/txn.h"
#include "txn/txn_thread.h"

namespace fathom::sim {
namespace {

struct Outcome {
  absl::Status commit;
  uint64_t rejected = 0;    // records the backup refused
  std::string backup_copy;  // the object's slot in the backup's copy, after truncation
  uint64_t history = 0;
};

absl::StatusOr<Outcome> CommitWhileTheBackupIsCutFromThePrimary(uint64_t seed) {
  SimClusterOptions options;
  options.seed = seed;
  auto started = SimCluster::Start(options);
  if (!started.ok()) return started.status();
  SimCluster& cluster = **started;
  // Node 1's region: primary 1, one backup; the third node coordinates.
  absl::StatusOr<uint32_t> backup = BackupOfOwnRegion(cluster.configuration(), 1);
  if (!backup.ok()) return backup.status();
  const uint32_t coordinator = *backup == 2 ? 3 : 2;

  absl::StatusOr<object::ObjectRef> ref = CommitNewObject(cluster, coordinator, /*on_node=*/1, "first");
  if (!ref.ok()) return ref.status();
  cluster.scheduler().RunFor(absl::Milliseconds(5));

  if (absl::Status s = cluster.node(*backup).Disconnect(1); !s.ok()) return s;  // both stay members
  Outcome outcome;
  txn::Transaction tx = cluster.txns(coordinator).Begin(0);
  outcome.commit = tx.Write(*ref, "second");
  if (outcome.commit.ok()) outcome.commit = tx.Commit();
  cluster.scheduler().RunFor(absl::Milliseconds(50));  // truncation: the backup applies its record

  outcome.rejected =
      SumOverThreads(cluster, *backup, [](txn::TxnThread& t) { return t.participant().stats().rejected; });
  outcome.backup_copy = BackupCopyOf(cluster, *backup, *ref);
  outcome.history = cluster.history();
  return outcome;
}

TEST(BackupAcceptanceTest, ABackupKeepsAndAppliesARecordWithoutAConnectionToThePrimary) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    ASSERT_OK_AND_ASSIGN(Outcome first, CommitWhileTheBackupIsCutFromThePrimary(seed));
    ASSERT_OK_AND_ASSIGN(Outcome second, CommitWhileTheBackupIsCutFromThePrimary(seed));
    EXPECT_EQ(first.history, second.history) << "the runs diverged";
    ASSERT_OK(first.commit);
    EXPECT_EQ(first.rejected, 0u) << "the backup refused a record the coordinator counted as a copy";
    EXPECT_NE(first.backup_copy.find("second"), std::string::npos) << "the backup's copy lacks the commit";
  }
}

// A commit by the third node of an object in node 1's memory, with a fault at the coordinator's
// commit_backup step (before the COMMIT-BACKUP goes out); then 50 ms for truncation to reach the backup.
struct CommitBackupFault {
  std::function<void(SimCluster&, uint32_t coordinator, uint32_t backup)> at_step;
  std::function<absl::Status(SimCluster&, uint32_t coordinator, uint32_t backup)> after_commit;
};

absl::StatusOr<Outcome> CommitWithAFaultAtCommitBackup(uint64_t seed, const CommitBackupFault& fault) {
  SimCluster* raw = nullptr;
  uint32_t coordinator = 0, backup = 0;
  bool armed = false;
  SimClusterOptions options;
  options.seed = seed;
  options.on_step = [&](uint32_t node, std::string_view step) {
    if (!armed || node != coordinator || step != "commit_backup") return;
    armed = false;
    fault.at_step(*raw, coordinator, backup);
  };
  auto started = SimCluster::Start(options);
  if (!started.ok()) return started.status();
  SimCluster& cluster = **started;
  raw = &cluster;
  absl::StatusOr<uint32_t> backup_of_one = BackupOfOwnRegion(cluster.configuration(), 1);
  if (!backup_of_one.ok()) return backup_of_one.status();
  backup = *backup_of_one;
  coordinator = backup == 2 ? 3 : 2;  // the third node

  absl::StatusOr<object::ObjectRef> ref = CommitNewObject(cluster, coordinator, /*on_node=*/1, "first");
  if (!ref.ok()) return ref.status();
  cluster.scheduler().RunFor(absl::Milliseconds(5));

  Outcome outcome;
  armed = true;
  txn::Transaction tx = cluster.txns(coordinator).Begin(0);
  outcome.commit = tx.Write(*ref, "second");
  if (outcome.commit.ok()) outcome.commit = tx.Commit();
  cluster.Record(absl::StrCat("commit: ", outcome.commit.ToString()));
  if (fault.after_commit) {
    if (absl::Status s = fault.after_commit(cluster, coordinator, backup); !s.ok()) return s;
  }
  cluster.scheduler().RunFor(absl::Milliseconds(50));  // truncation: the backup applies its record
  outcome.rejected =
      SumOverThreads(cluster, backup, [](txn::TxnThread& t) { return t.participant().stats().rejected; });
  outcome.backup_copy = BackupCopyOf(cluster, backup, *ref);
  outcome.history = cluster.history();
  return outcome;
}

// The coordinator's COMMIT-BACKUP write is lost in a partition from the backup that heals 20 ms later (both
// stay members): the record is sent again over a new connection and the transaction commits. (It aborted:
// a unilateral abort with the record possibly in other backups, which recovery could not undo.)
TEST(BackupAcceptanceTest, ACommitBackupLostInAPartitionThatHealsIsSentAgain) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    // Healed by the network itself: a heal left to background work can come late, since an idle poll
    // moves virtual time straight to the next event (here the lost write's deadline, 5 s on).
    CommitBackupFault partition{.at_step = [](SimCluster& cluster, uint32_t coordinator, uint32_t backup) {
      cluster.network().Partition(coordinator, backup, absl::Milliseconds(20));
    }};
    ASSERT_OK_AND_ASSIGN(Outcome first, CommitWithAFaultAtCommitBackup(seed, partition));
    ASSERT_OK_AND_ASSIGN(Outcome second, CommitWithAFaultAtCommitBackup(seed, partition));
    EXPECT_EQ(first.history, second.history) << "the runs diverged";
    EXPECT_OK(first.commit);
    EXPECT_NE(first.backup_copy.find("second"), std::string::npos) << "the backup's copy lacks the commit";
  }
}

// The backup drops its connection from the coordinator (as a member without a lease does) just before the
// COMMIT-BACKUP lands: the write completes, so the coordinator counts the copy and commits, but the backup
// drained its ring before and never reads the record. When the connection is made again, the coordinator
// learns the record was not consumed and sends it again, then its truncation, so the backup's copy gets
// the commit. (It was lost: the copy kept the old state, which a failover would have served.)
TEST(BackupAcceptanceTest, ACommitBackupTheBackupDiscardedUnreadIsDeliveredAgain) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    CommitBackupFault discarded{
        // Every node runs on this thread: the backup's first step of a disconnect (its messenger forgets
        // the coordinator, after handling what was in the ring) happens between the decision and the write.
        .at_step =
            [](SimCluster& cluster, uint32_t coordinator, uint32_t backup) {
              absl::StatusOr<node::NodeThread*> receiver = cluster.node(backup).Thread(0);
              if (receiver.ok()) (*receiver)->messenger().RemovePeer(coordinator).IgnoreError();
            },
        // The rest of the disconnect, and the connection made again.
        .after_commit = [](SimCluster& cluster, uint32_t coordinator, uint32_t backup) -> absl::Status {
          cluster.scheduler().RunFor(absl::Milliseconds(5));
          if (absl::Status s = cluster.node(backup).Disconnect(coordinator); !s.ok()) return s;
          return cluster.node(backup).JoinInProcess(cluster.node(coordinator));
        }};
    ASSERT_OK_AND_ASSIGN(Outcome first, CommitWithAFaultAtCommitBackup(seed, discarded));
    ASSERT_OK_AND_ASSIGN(Outcome second, CommitWithAFaultAtCommitBackup(seed, discarded));
    EXPECT_EQ(first.history, second.history) << "the runs diverged";
    EXPECT_OK(first.commit);
    EXPECT_EQ(first.rejected, 0u);
    EXPECT_NE(first.backup_copy.find("second"), std::string::npos) << "the backup's copy lacks the commit";
  }
}

}  // namespace
}  // namespace fathom::sim
