// Truncation after a connection reset, on the replayable simulation. A backup applies a committed
// transaction only when its coordinator truncates it, so a truncation that cannot be sent while the
// backup is still a member must be kept and sent once the connection is back (it was dropped, and the
// backup never applied the commit); once the backup has left the configuration, nothing is owed to it.
#include <cstdint>
#include <string>

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

uint64_t Owed(SimCluster& cluster, uint32_t node) {
  return SumOverThreads(cluster, node, [](txn::TxnThread& t) { return t.truncator().pending(); });
}
uint64_t Kept(SimCluster& cluster, uint32_t node) {
  return SumOverThreads(cluster, node, [](txn::TxnThread& t) { return t.participant().log_entries(); });
}

struct Outcome {
  uint64_t owed_while_disconnected = 0;
  uint64_t kept_while_disconnected = 0;
  uint64_t owed_after_reconnect = 0;
  uint64_t kept_after_reconnect = 0;
  std::string backup_copy;  // the object's bytes in the backup's copy, after the reconnect
  uint64_t history = 0;
};

absl::StatusOr<Outcome> RunResetAndReconnect(uint64_t seed) {
  SimClusterOptions options;
  options.seed = seed;
  options.lease_period = absl::Milliseconds(500);  // both stay members while the connection is down
  auto started = SimCluster::Start(options);
  if (!started.ok()) return started.status();
  SimCluster& cluster = **started;
  auto backup = BackupOfOwnRegion(cluster.configuration(), 1);
  if (!backup.ok()) return backup.status();

  absl::StatusOr<object::ObjectRef> ref = CommitNewObject(cluster, /*coordinator=*/1, /*on_node=*/1, "first");
  if (!ref.ok()) return ref.status();
  cluster.scheduler().RunFor(absl::Milliseconds(5));  // its truncation goes out

  txn::Transaction tx = cluster.txns(1).Begin(0);
  if (absl::Status s = tx.Write(*ref, "second"); !s.ok()) return s;
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  // The COMMIT-BACKUP is in the backup's memory; its truncation is owed. The connection resets, and stays
  // down while both membership followers are held (as slow ones would be).
  cluster.server(1).PauseMembership();
  cluster.server(*backup).PauseMembership();
  if (absl::Status s = cluster.node(1).Disconnect(*backup); !s.ok()) return s;
  cluster.scheduler().RunFor(absl::Milliseconds(50));
  Outcome outcome;
  outcome.owed_while_disconnected = Owed(cluster, 1);
  outcome.kept_while_disconnected = Kept(cluster, *backup);

  // The followers connect the two again, as fathomd's do.
  if (absl::Status s = cluster.server(1).ResumeMembership(); !s.ok()) return s;
  if (absl::Status s = cluster.server(*backup).ResumeMembership(); !s.ok()) return s;
  cluster.scheduler().RunFor(absl::Milliseconds(300));
  outcome.owed_after_reconnect = Owed(cluster, 1);
  outcome.kept_after_reconnect = Kept(cluster, *backup);
  outcome.backup_copy = BackupCopyOf(cluster, *backup, *ref);
  outcome.history = cluster.history();
  return outcome;
}

TEST(TruncationTest, ATruncationOwedToAMemberSurvivesAConnectionReset) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    absl::StatusOr<Outcome> first = RunResetAndReconnect(seed);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<Outcome> second = RunResetAndReconnect(seed);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_GT(first->owed_while_disconnected, 0u) << "the truncation was dropped while the backup is a member";
    EXPECT_GT(first->kept_while_disconnected, 0u);
    EXPECT_EQ(first->owed_after_reconnect, 0u);
    EXPECT_EQ(first->kept_after_reconnect, 0u) << "the backup never applied the commit";
    EXPECT_NE(first->backup_copy.find("second"), std::string::npos) << "the backup's copy lacks the commit";
  }
}

TEST(TruncationTest, NothingIsOwedToANodeThatLeft) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    SimClusterOptions options;
    options.seed = seed;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SimCluster> cluster, SimCluster::Start(options));
    ASSERT_OK_AND_ASSIGN(uint32_t backup, BackupOfOwnRegion(cluster->configuration(), 1));
    txn::Transaction tx = cluster->txns(1).Begin(0);
    ASSERT_OK_AND_ASSIGN(object::ObjectRef ref, tx.Alloc(16, txn::AllocHint{.node = 1}));
    ASSERT_OK(tx.Write(ref, "value"));
    ASSERT_OK(tx.Commit());
    ASSERT_OK(cluster->node(1).Disconnect(backup));
    cluster->scheduler().RunFor(absl::Milliseconds(5));
    ASSERT_GT(Owed(*cluster, 1), 0u);
    ASSERT_OK(cluster->Leave(backup));  // it leaves the configuration
    cluster->scheduler().RunFor(absl::Milliseconds(50));
    EXPECT_GT(cluster->applied_epoch(1), 1u);
    EXPECT_EQ(Owed(*cluster, 1), 0u) << "ids stay owed to a node that left";
  }
}

}  // namespace
}  // namespace fathom::sim
