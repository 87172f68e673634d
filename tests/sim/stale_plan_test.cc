// Records planned under an older configuration, on the replayable simulation (each seed runs twice and
// must replay). Node 3 coordinates a transaction writing an object of node 2's region, whose backup is
// node 1 (the CM's placement for three nodes and f = 1, checked below). When node 2 is removed, node 1 is
// promoted to the region's primary: a COMMIT-BACKUP planned for node 1 as a backup must then either be
// handled by node 1 before it serves the region, or never be sent (node/config_applied.h).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/configuration.h"
#include "coordinator/placement.h"
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
  bool served_while_behind = false;  // node 1 served the region while node 3 still worked from the old map
  absl::Status commit;               // the transaction planned under the old map
  uint64_t records_at_one = ~uint64_t{0};  // of the region, pending at node 1 after the commit
  std::vector<absl::StatusOr<std::string>> reads;  // the object, read by node 1 and then node 3
  uint64_t history = 0;
};

// A fault that runs once, when node 3's commit next reaches `step` after the test arms it.
struct Fault {
  std::string_view step;
  std::function<void(SimCluster&, const object::ObjectRef&)> run;
  bool armed = false;       // set by the test; cleared as the fault runs
  SimCluster* cluster = nullptr;
  object::ObjectRef ref;
};

// The run's cluster, with node 2's region backed up by node 1 and one object in it committed ("v0").
struct Setup {
  std::unique_ptr<SimCluster> cluster;
  object::ObjectRef ref;
  std::shared_ptr<Fault> fault;  // arm with fault->armed = true
};

absl::StatusOr<Setup> StartWithAnObjectOnTwo(uint64_t seed, std::string_view fault_step,
                                             std::function<void(SimCluster&, const object::ObjectRef&)> fault,
                                             SimClusterOptions options = {}) {
  Setup setup;
  setup.fault = std::make_shared<Fault>(Fault{fault_step, std::move(fault)});
  options.seed = seed;
  options.on_step = [f = setup.fault](uint32_t node, std::string_view step) {
    if (!f->armed || node != 3 || step != f->step) return;
    f->armed = false;
    f->run(*f->cluster, f->ref);
  };
  auto started = SimCluster::Start(options);
  if (!started.ok()) return started.status();
  setup.cluster = std::move(*started);
  setup.fault->cluster = setup.cluster.get();
  absl::StatusOr<uint32_t> backup = BackupOfOwnRegion(setup.cluster->configuration(), 2);
  if (!backup.ok()) return backup.status();
  if (*backup != 1) return absl::FailedPreconditionError("node 2's region is not backed up by node 1");
  absl::StatusOr<object::ObjectRef> ref = CommitNewObject(*setup.cluster, /*coordinator=*/3, /*on_node=*/2, "v0");
  if (!ref.ok()) return ref.status();
  setup.ref = *ref;
  setup.fault->ref = *ref;
  setup.cluster->scheduler().RunFor(absl::Milliseconds(5));  // its truncation reaches node 1
  return setup;
}

// Node 3 writes "v1" to the setup's object and commits, on its thread `thread`, with the setup's fault
// armed. The commit's status, or InternalError if the commit never reached the fault's step.
absl::StatusOr<absl::Status> CommitV1FromNodeThree(Setup& setup, int thread) {
  setup.fault->armed = true;
  absl::Status commit;
  {
    txn::Transaction tx = setup.cluster->txns(3).Begin(thread);
    commit = tx.Write(setup.ref, "v1");
    if (commit.ok()) commit = tx.Commit();
  }
  setup.cluster->Record(absl::StrCat("commit: ", commit.ToString()));
  if (setup.fault->armed) {
    return absl::InternalError(absl::StrCat("the commit never reached its ", std::string(setup.fault->step), " step"));
  }
  return commit;
}

void ReadBack(SimCluster& cluster, const object::ObjectRef& ref, Outcome& outcome) {
  for (uint32_t reader : {1u, 3u}) {
    txn::Transaction tx = cluster.txns(reader).Begin(0);
    absl::StatusOr<std::string> read = tx.Read(ref);
    cluster.Record(absl::StrCat("node ", reader, " reads: ", read.ok() ? *read : read.status().ToString()));
    outcome.reads.push_back(std::move(read));
  }
  outcome.history = cluster.history();
}

// Node 2 crashes; once the CM removed it and node 1 applied that configuration (node 1 is the primary of
// node 2's region by it), node 1 tries to serve the region, again and again, for 100 ms.
absl::Status CrashNodeTwoAndLetNodeOneTryToServe(SimCluster& cluster) {
  cluster.Stop(2);
  auto promoted = [&cluster] {
    return coordinator::FindMember(cluster.configuration(), 2) == nullptr &&
           cluster.applied_epoch(1) == cluster.configuration().epoch();
  };
  if (!cluster.scheduler().RunUntil(promoted, absl::Seconds(10))) {
    return absl::DeadlineExceededError("node 2 was never removed");
  }
  cluster.scheduler().RunFor(absl::Milliseconds(100));
  return absl::OkStatus();
}

// Node 3's thread 1 runs a transaction that reads an object of node 1 and writes the one of node 2. It
// locks at node 2 and stops while it validates its read (frozen), and node 3 applies no new
// configuration. Node 2 crashes and is removed; node 1 is promoted. Then node 3's thread sends its
// COMMIT-BACKUP to node 1, still the backup by the only map node 3 has, and only then node 3 learns the
// new configuration.
absl::StatusOr<Outcome> CommitBackupFromAMemberBehind(uint64_t seed) {
  absl::StatusOr<Setup> setup = StartWithAnObjectOnTwo(seed, "validate", [](SimCluster& c, const object::ObjectRef&) {
    c.scheduler().Freeze(*c.node(3).Thread(1));  // after this turn: the validating read still goes out
  });
  if (!setup.ok()) return setup.status();
  SimCluster& cluster = *setup->cluster;
  bool& armed = setup->fault->armed;
  const object::ObjectRef ref = setup->ref;
  const uint32_t region = ref.address.region;

  absl::StatusOr<object::ObjectRef> on_one = CommitNewObject(cluster, /*coordinator=*/3, /*on_node=*/1, "x");
  if (!on_one.ok()) return on_one.status();
  cluster.scheduler().RunFor(absl::Milliseconds(5));

  cluster.HoldConfigurations(3, true);
  armed = true;
  std::optional<absl::Status> commit;
  auto run = [&commit, ref, read_ref = *on_one](txn::TxnThread& t) {
    std::shared_ptr<txn::TxState> tx = t.Begin();
    t.Read(*tx, read_ref, [&t, &commit, tx, ref](absl::StatusOr<std::string> read) {
      absl::Status s = read.status();
      if (s.ok()) s = t.Write(*tx, ref, "v1");
      if (!s.ok()) {
        commit = s;
        return;
      }
      t.Commit(tx, [&commit](absl::Status s) { commit = s; });
    });
  };
  if (absl::Status posted = cluster.txns(3).Post(1, run); !posted.ok()) return posted;
  if (!cluster.scheduler().RunUntil([&] { return !armed; }, absl::Seconds(5))) {
    return absl::InternalError(absl::StrCat("the commit never reached its validation: ",
                                            commit.has_value() ? commit->ToString() : "still running"));
  }
  // It granted the lock: validation comes after.
  if (absl::Status s = CrashNodeTwoAndLetNodeOneTryToServe(cluster); !s.ok()) return s;
  Outcome outcome;
  outcome.served_while_behind = cluster.node(1).Serves(region);
  cluster.Record(absl::StrCat("served while node 3 was behind: ", outcome.served_while_behind));

  cluster.scheduler().Resume(*cluster.node(3).Thread(1));
  cluster.scheduler().RunFor(absl::Milliseconds(5));  // the COMMIT-BACKUP goes out, under the old map
  cluster.HoldConfigurations(3, false);
  if (!cluster.scheduler().RunUntil([&] { return commit.has_value() && cluster.node(1).Serves(region); },
                                    absl::Seconds(10))) {
    return absl::DeadlineExceededError(absl::StrCat("the commit ", commit.has_value() ? "ended" : "never ended",
                                                    "; node 1 serves the region: ", cluster.node(1).Serves(region)));
  }
  outcome.commit = *commit;
  cluster.Record(absl::StrCat("commit: ", outcome.commit.ToString()));
  cluster.scheduler().RunFor(absl::Milliseconds(5));  // node 3 imports the region from node 1
  outcome.records_at_one =
      SumOverThreads(cluster, 1, [region](txn::TxnThread& t) { return t.participant().BackupRecordsFor(region); });
  ReadBack(cluster, ref, outcome);
  return outcome;
}

// Node 3 learns, between its LOCK and its COMMIT-BACKUP, the next configuration as `change` makes it
// (only node 3's map says so); then another transaction writes "v2" to the object.
absl::StatusOr<Outcome> MapChangedBeforeCommitBackup(
    uint64_t seed, std::function<void(coordinator::Configuration&, const object::ObjectRef&)> change) {
  absl::StatusOr<Setup> setup = StartWithAnObjectOnTwo(
      seed, "commit_backup", [change = std::move(change)](SimCluster& c, const object::ObjectRef& ref) {
        coordinator::Configuration next = c.configuration();
        next.set_epoch(next.epoch() + 1);
        change(next, ref);
        c.node(3).region_directory().Set(coordinator::RegionMapOf(next));
      });
  if (!setup.ok()) return setup.status();
  SimCluster& cluster = *setup->cluster;
  const object::ObjectRef ref = setup->ref;
  const uint32_t region = ref.address.region;

  Outcome outcome;
  absl::StatusOr<absl::Status> commit = CommitV1FromNodeThree(*setup, 0);
  if (!commit.ok()) return commit.status();
  outcome.commit = *commit;
  cluster.node(3).region_directory().Set(coordinator::RegionMapOf(cluster.configuration()));
  cluster.scheduler().RunFor(absl::Milliseconds(5));
  outcome.records_at_one =
      SumOverThreads(cluster, 1, [region](txn::TxnThread& t) { return t.participant().BackupRecordsFor(region); });
  // Node 2 released the lock (the transaction aborted): another transaction writes the object.
  {
    txn::Transaction tx = cluster.txns(1).Begin(0);
    absl::Status s = tx.Write(ref, "v2");
    if (s.ok()) s = tx.Commit();
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("the write after the abort: ", s.message()));
  }
  cluster.scheduler().RunFor(absl::Milliseconds(5));
  ReadBack(cluster, ref, outcome);
  return outcome;
}

// Node 3 commits "v1" to the object on node 2, on its thread 1. Node 1 stops reading node 3 on thread 1
// just as node 3 sends its COMMIT-BACKUP (the first step of a disconnect: its messenger forgets node 3),
// so the record lands in node 1's ring but is never read, and then drops the connection on that thread
// (as Node::Disconnect does thread by thread; thread 0, which carries the leases, stays connected). The
// commit succeeds (node 2 installs it), then node 2 crashes and node 1, whose copy lacks the commit, is
// promoted. Node 3 notices the drop and connects again only once node 1 had time to serve the region; it
// sends the record again on the new connection.
absl::StatusOr<Outcome> CommittedRecordTheBackupDiscardedUnread(uint64_t seed) {
  constexpr int kThread = 1;
  SimClusterOptions options;
  // Longer than node 1's retries of the promotion (a quarter lease period): the record, if it went after
  // node 3's announcement on the new connection, would come too late.
  options.resend_interval = absl::Milliseconds(30);
  absl::StatusOr<Setup> setup = StartWithAnObjectOnTwo(
      seed, "commit_backup",
      [](SimCluster& c, const object::ObjectRef&) {
        if (absl::StatusOr<node::NodeThread*> one = c.node(1).Thread(kThread); one.ok()) {
          (*one)->messenger().RemovePeer(3).IgnoreError();
        }
      },
      options);
  if (!setup.ok()) return setup.status();
  SimCluster& cluster = *setup->cluster;
  const object::ObjectRef ref = setup->ref;
  const uint32_t region = ref.address.region;

  Outcome outcome;
  absl::StatusOr<absl::Status> commit = CommitV1FromNodeThree(*setup, kThread);
  if (!commit.ok()) return commit.status();
  outcome.commit = *commit;
  absl::Status dropped = cluster.node(1).RunOnThread(kThread, [](node::NodeThread& thread) {
    thread.RemovePeer(3);
    return absl::OkStatus();
  });
  if (!dropped.ok()) return dropped;
  if (absl::Status s = CrashNodeTwoAndLetNodeOneTryToServe(cluster); !s.ok()) return s;
  outcome.served_while_behind = cluster.node(1).Serves(region);
  cluster.Record(absl::StrCat("served while node 3 was not connected: ", outcome.served_while_behind));
  if (!outcome.served_while_behind) {
    // Node 3 notices (its side goes: the record is lost, so owed again) and joins node 1 again.
    if (absl::Status s = cluster.node(3).Disconnect(1); !s.ok()) return s;
    if (absl::Status s = cluster.node(3).JoinInProcess(cluster.node(1)); !s.ok()) return s;
    if (!cluster.scheduler().RunUntil([&] { return cluster.node(1).Serves(region); }, absl::Seconds(10))) {
      return absl::DeadlineExceededError("node 1 never served the region after node 3 came back");
    }
  }
  // Read the moment node 1 serves it (node 1's own region now: no message needed).
  {
    txn::Transaction tx = cluster.txns(1).Begin(0);
    absl::StatusOr<std::string> read = tx.Read(ref);
    cluster.Record(absl::StrCat("node 1 reads at once: ", read.ok() ? *read : read.status().ToString()));
    outcome.reads.push_back(std::move(read));
  }
  cluster.scheduler().RunFor(absl::Milliseconds(50));  // node 3 imports the region; truncations settle
  outcome.records_at_one =
      SumOverThreads(cluster, 1, [region](txn::TxnThread& t) { return t.participant().BackupRecordsFor(region); });
  ReadBack(cluster, ref, outcome);
  return outcome;
}

void ExpectBothRead(const Outcome& outcome, std::string_view value) {
  ASSERT_EQ(outcome.reads.size(), 2u);
  for (const auto& read : outcome.reads) {
    ASSERT_OK(read.status());
    EXPECT_EQ(*read, value);
  }
}

// A member that has not applied the configuration that promoted node 1 may still send it a COMMIT-BACKUP
// planned for the old one: node 1 serves the region only once every connected member said it works from
// that configuration (CONFIG-APPLIED), so the record is handled first and the commit installed before anyone
// reads the region. (Node 1 served at once, and a commit whose locks died with node 2 came in afterwards.)
TEST(StalePlanTest, APromotedBackupServesOnlyOnceEveryConnectedMemberWorksFromItsConfiguration) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    ASSERT_OK_AND_ASSIGN(Outcome first, CommitBackupFromAMemberBehind(seed));
    ASSERT_OK_AND_ASSIGN(Outcome second, CommitBackupFromAMemberBehind(seed));
    EXPECT_EQ(first.history, second.history) << "the runs diverged";
    EXPECT_FALSE(first.served_while_behind) << "node 1 served the region before node 3 applied its configuration";
    // Every backup holds the record and the only primary is gone: committed, outcome unknown to node 3.
    EXPECT_EQ(first.commit.code(), absl::StatusCode::kUnavailable) << first.commit;
    EXPECT_EQ(first.records_at_one, 0u);
    ExpectBothRead(first, "v1");
  }
}

// A coordinator whose map changed the replicas it planned sends no COMMIT-BACKUP (a backup promoted since
// would take it without the locks its old primary held) and aborts: nothing is left at node 1, and node 2
// released the lock. (The record went out and the commit succeeded.)
TEST(StalePlanTest, ACoordinatorSendsNoCommitBackupOnceItsMapNamesOtherReplicas) {
  // Node 1 is no longer the region's backup but its primary (as after node 2's removal).
  auto promote_one = [](coordinator::Configuration& next, const object::ObjectRef& ref) {
    for (coordinator::RegionPlacement& placed : *next.mutable_regions()) {
      if (placed.region_id() != ref.address.region) continue;
      placed.set_primary(1);
      placed.clear_backups();
    }
  };
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    ASSERT_OK_AND_ASSIGN(Outcome first, MapChangedBeforeCommitBackup(seed, promote_one));
    ASSERT_OK_AND_ASSIGN(Outcome second, MapChangedBeforeCommitBackup(seed, promote_one));
    EXPECT_EQ(first.history, second.history) << "the runs diverged";
    EXPECT_EQ(first.commit.code(), absl::StatusCode::kUnavailable) << first.commit;
    EXPECT_NE(first.commit.message().find("other replicas"), std::string_view::npos) << first.commit;
    EXPECT_EQ(first.records_at_one, 0u);
    ExpectBothRead(first, "v2");
  }
}

// A coordinator removed while alive (paused past its lease) and admitted again since its transaction began
// no longer decides it: recovery did, from what the replicas held when they fenced the removal. So it
// sends no COMMIT-BACKUP, aborts, and never reports success (issue 58, path 4: it sent the record, which a
// backup took after recovery had aborted the transaction, and reported the commit).
TEST(StalePlanTest, ACoordinatorAdmittedAgainFinishesNoTransactionItBeganBefore) {
  auto admit_three_again = [](coordinator::Configuration& next, const object::ObjectRef&) {
    for (coordinator::MemberInfo& m : *next.mutable_members()) {
      if (m.node_id() == 3) m.set_joined_epoch(next.epoch());
    }
  };
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    ASSERT_OK_AND_ASSIGN(Outcome first, MapChangedBeforeCommitBackup(seed, admit_three_again));
    ASSERT_OK_AND_ASSIGN(Outcome second, MapChangedBeforeCommitBackup(seed, admit_three_again));
    EXPECT_EQ(first.history, second.history) << "the runs diverged";
    EXPECT_EQ(first.commit.code(), absl::StatusCode::kUnavailable) << first.commit;
    EXPECT_NE(first.commit.message().find("was removed from the configuration"), std::string_view::npos)
        << first.commit;
    EXPECT_EQ(first.records_at_one, 0u);
    ExpectBothRead(first, "v2");
  }
}

// A committed transaction's COMMIT-BACKUP that the backup discarded unread, with a connection it dropped,
// is sent again on the next connection. The backup, promoted meanwhile, serves the region only once that
// member is connected again and has announced its configuration, which its sends owed since the drop come
// ahead of (TxnThread::Owe): the commit is installed before anyone reads the region. (Node 1 served the
// region without the commit, and the record came late.)
TEST(StalePlanTest, ACommitBackupLostWithADroppedConnectionIsInstalledBeforeThePromotedBackupServes) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    ASSERT_OK_AND_ASSIGN(Outcome first, CommittedRecordTheBackupDiscardedUnread(seed));
    ASSERT_OK_AND_ASSIGN(Outcome second, CommittedRecordTheBackupDiscardedUnread(seed));
    EXPECT_EQ(first.history, second.history) << "the runs diverged";
    ASSERT_OK(first.commit);
    EXPECT_FALSE(first.served_while_behind) << "node 1 served the region while node 3 owed it a record";
    EXPECT_EQ(first.records_at_one, 0u);
    ASSERT_EQ(first.reads.size(), 3u);
    for (const auto& read : first.reads) {
      ASSERT_OK(read.status());
      EXPECT_EQ(*read, "v1");
    }
  }
}

}  // namespace
}  // namespace fathom::sim
