// Transaction recovery on the replayable simulation (each seed runs twice and must replay): node 3
// coordinates a transaction writing an object in node 1's region and one in node 2's (and, in one case,
// one in its own), and crashes when the commit reaches a chosen step. The CM (node 1) removes it when its
// lease lapses, asks every member what it holds of node 3's transactions, and decides: abort if no backup
// got its COMMIT-BACKUP, commit once every backup did. Either way every object is unlocked afterwards and
// no member keeps a record of the transaction, and every region ends with f+1 identical replicas.
// (Without recovery the objects stay locked for good.) And with 5 nodes: the coordinator and the primary of
// one written region die together during COMMIT-BACKUP; the transaction aborts everywhere.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "platform/base/status_macros.h"
#include "platform/base/status_test_macros.h"
#include "tests/sim/seeds.h"
#include "tests/sim/sim_cluster.h"
#include "tests/sim/sim_probes.h"
#include "txn/recovery_records.h"
#include "txn/txn.h"
#include "txn/txn_thread.h"

namespace fathom::sim {
namespace {

struct Outcome {
  std::vector<std::string> after;  // each object's first two bytes, read by node 1 after recovery
  absl::Status write_after;        // node 1 writes every object again
  uint64_t held_one = 0, held_two = 0;  // log entries left at nodes 1 and 2 after recovery
  // Slots node 1 keeps reserved (node 3's spares: spare_slots.h) before the crash and after recovery.
  uint64_t reserved_one_before = 0, reserved_one_after = 0;
  bool three_removed = false;
  std::vector<std::string> replica_differences;  // after recovery
  uint64_t history = 0;
};

// Node 1 reads each of `refs` (its first two bytes, or the error) into `after`, then writes them all again
// in one transaction: `write_after` is not OK if one stayed locked.
void ReadAndRewrite(SimCluster& cluster, const std::vector<object::ObjectRef>& refs, std::vector<std::string>* after,
                    absl::Status* write_after) {
  txn::Transaction read = cluster.txns(1).Begin(0);
  for (const object::ObjectRef& ref : refs) {
    absl::StatusOr<std::string> value = read.Read(ref);
    after->push_back(value.ok() ? value->substr(0, 2) : value.status().ToString());
  }
  read.Abort();
  txn::Transaction write = cluster.txns(1).Begin(0);
  for (const object::ObjectRef& ref : refs) {
    if (write_after->ok()) *write_after = write.Write(ref, "v2");
  }
  if (write_after->ok()) *write_after = write.Commit();
}

// `crash_step`: node 3 stops when its commit reaches it. `on_three`: the transaction writes an object in
// node 3's own region too (a local primary that dies with the coordinator; its backup is promoted).
absl::StatusOr<Outcome> CrashCoordinator(uint64_t seed, std::string_view crash_step, bool on_three) {
  SimCluster* raw = nullptr;
  bool armed = false;
  SimClusterOptions options;
  options.seed = seed;
  options.on_step = [&](uint32_t node, std::string_view step) {
    if (!armed || node != 3 || step != crash_step) return;
    armed = false;
    raw->Stop(3);
  };
  auto started = SimCluster::Start(options);
  if (!started.ok()) return started.status();
  SimCluster& cluster = **started;
  raw = &cluster;

  std::vector<object::ObjectRef> refs;
  for (uint32_t owner : on_three ? std::vector<uint32_t>{1, 2, 3} : std::vector<uint32_t>{1, 2}) {
    auto ref = CommitNewObject(cluster, /*coordinator=*/1, owner, "v0");
    if (!ref.ok()) return ref.status();
    refs.push_back(*ref);
  }
  // Node 3 makes an object in node 1's memory: node 1 then keeps spare slots reserved for it.
  if (auto made = CommitNewObject(cluster, /*coordinator=*/3, /*on_node=*/1, "s"); !made.ok()) return made.status();
  cluster.scheduler().RunFor(absl::Milliseconds(5));
  auto reserved = [](txn::TxnThread& t) { return t.participant().reserved(); };
  const uint64_t reserved_one_before = SumOverThreads(cluster, 1, reserved);

  armed = true;
  auto commit = std::make_shared<absl::Status>(absl::UnknownError("not returned"));
  absl::Status posted = cluster.txns(3).Post(0, [refs, commit](txn::TxnThread& t) {
    std::shared_ptr<txn::TxState> tx = t.Begin();
    for (const object::ObjectRef& ref : refs) {
      if (absl::Status s = t.Write(*tx, ref, "v1"); !s.ok()) {
        *commit = s;
        return;
      }
    }
    t.Commit(tx, [tx, commit](absl::Status s) { *commit = s; });
  });
  if (!posted.ok()) return posted;
  for (int i = 0; i < 1000 && armed; ++i) cluster.scheduler().RunFor(absl::Milliseconds(1));
  if (armed) return absl::InternalError(absl::StrCat("the commit never reached ", std::string(crash_step)));
  cluster.Record(absl::StrCat("node 3 crashed at ", std::string(crash_step), "; its commit: ", commit->ToString()));

  // Removal (a lease), promotion of node 3's region, recovery and the forgetting take well under this.
  cluster.scheduler().RunFor(absl::Seconds(2));
  Outcome outcome;
  outcome.three_removed = coordinator::FindMember(cluster.configuration(), 3) == nullptr;
  auto held = [](txn::TxnThread& t) { return t.participant().log_entries(); };
  outcome.held_one = SumOverThreads(cluster, 1, held);
  outcome.held_two = SumOverThreads(cluster, 2, held);
  outcome.reserved_one_before = reserved_one_before;
  outcome.reserved_one_after = SumOverThreads(cluster, 1, reserved);
  outcome.replica_differences = ReplicaDifferences(cluster);
  ReadAndRewrite(cluster, refs, &outcome.after, &outcome.write_after);
  outcome.history = cluster.history();
  return outcome;
}

absl::StatusOr<Outcome> CrashTwice(uint64_t seed, std::string_view crash_step, bool on_three) {
  absl::StatusOr<Outcome> first = CrashCoordinator(seed, crash_step, on_three);
  if (!first.ok()) return first.status();
  absl::StatusOr<Outcome> second = CrashCoordinator(seed, crash_step, on_three);
  if (!second.ok()) return second.status();
  if (first->history != second->history) return absl::InternalError("the two runs of one seed diverged");
  return first;
}

// Node 3 crashes at `crash_step` on every seed (each twice, replayed); afterwards every written object
// holds `value` and is unlocked, no record is left, and the replicas are identical.
void ExpectRecovered(std::string_view crash_step, bool on_three, const std::string& value) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    absl::StatusOr<Outcome> outcome = CrashTwice(seed, crash_step, on_three);
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_TRUE(outcome->three_removed);
    EXPECT_EQ(outcome->after, std::vector<std::string>(on_three ? 3 : 2, value));
    EXPECT_TRUE(outcome->write_after.ok()) << outcome->write_after << " (an object stayed locked)";
    EXPECT_EQ(outcome->held_one, 0u) << "node 1 keeps a record of the recovered transaction";
    EXPECT_EQ(outcome->held_two, 0u) << "node 2 keeps a record of the recovered transaction";
    EXPECT_GT(outcome->reserved_one_before, 0u);
    EXPECT_EQ(outcome->reserved_one_after, 0u) << "node 1 keeps slots reserved for node 3, which is gone";
    EXPECT_TRUE(outcome->replica_differences.empty()) << absl::StrJoin(outcome->replica_differences, "\n");
  }
}

// Locks granted, no COMMIT-BACKUP written: nothing can have been reported committed, so it aborts.
TEST(TxnRecoveryTest, ACoordinatorThatDiesBeforeCommitBackupIsAborted) {
  ExpectRecovered("commit_backup", /*on_three=*/false, "v0");
}

// Every backup holds its record, no primary its COMMIT-PRIMARY: complete, so it commits (the
// coordinator might have been about to report success).
TEST(TxnRecoveryTest, ACoordinatorThatDiesAfterCommitBackupIsCommitted) {
  ExpectRecovered("commit_primary", /*on_three=*/false, "v1");
}

// Every primary installed it and the truncation never went out: the backups apply their records.
TEST(TxnRecoveryTest, ACoordinatorThatDiesBeforeTruncationIsCommittedEverywhere) {
  ExpectRecovered("truncate", /*on_three=*/false, "v1");
}

// The coordinator was also the primary of one written region: its backup (node 1) is promoted holding the
// record, recovery commits, and node 1 serves the region with the write once the record is applied.
TEST(TxnRecoveryTest, ACoordinatorThatWasAlsoAPrimaryIsCommittedThroughThePromotedBackup) {
  ExpectRecovered("commit_primary", /*on_three=*/true, "v1");
}

// The coordinator and the primary of one written region die together, during COMMIT-BACKUP (5 nodes, f =
// 1, node 1 the CM): node 5 writes an object of node `a`'s region and one of node `b`'s; its COMMIT-BACKUP
// reaches b's backup but not a's (cut off from node 5), and then nodes 5 and a stop. What recovery finds:
// b's locks and b's backup record; of region a nothing, since a's backup, promoted, never got its record.
// No COMMIT-PRIMARY can have gone out (a's backup never had the record), so the transaction must abort at
// b too: committing from what survived would leave region a without its half of the write.
struct DoubleFailureOutcome {
  std::vector<std::string> after;  // each object's first two bytes, read by node 1 after recovery
  absl::Status write_after;
  std::vector<std::string> replica_differences;
  uint64_t history = 0;
};

// Lets removal, promotion and recovery run, then reads `refs` at node 1 and writes them all again.
DoubleFailureOutcome AfterRecovery(SimCluster& cluster, const std::vector<object::ObjectRef>& refs) {
  cluster.scheduler().RunFor(absl::Seconds(3));
  DoubleFailureOutcome outcome;
  outcome.replica_differences = ReplicaDifferences(cluster);
  ReadAndRewrite(cluster, refs, &outcome.after, &outcome.write_after);
  outcome.history = cluster.history();
  return outcome;
}

// Runs `scenario` twice for `seed` (it must replay) and checks the first run: every object reads
// `expected` after recovery, none stays locked, the replicas agree.
void ExpectAllOrNothing(uint64_t seed, const std::function<absl::StatusOr<DoubleFailureOutcome>(uint64_t)>& scenario,
                        const std::string& expected) {
  SCOPED_TRACE(Replay(seed));
  absl::StatusOr<DoubleFailureOutcome> first = scenario(seed);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<DoubleFailureOutcome> second = scenario(seed);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->history, second->history) << "the two runs of one seed diverged";
  EXPECT_EQ(first->after, std::vector<std::string>(first->after.size(), expected)) << "a half-applied transaction";
  EXPECT_TRUE(first->write_after.ok()) << first->write_after << " (an object stayed locked)";
  EXPECT_TRUE(first->replica_differences.empty()) << absl::StrJoin(first->replica_differences, "\n");
}

absl::StatusOr<DoubleFailureOutcome> CrashCoordinatorAndPrimary(uint64_t seed) {
  SimClusterOptions options;
  options.seed = seed;
  options.nodes = 5;
  // When node 5's commit gives up on a's backup (cut off below) and is about to send its ABORTs, node 5
  // and node a stop.
  SimCluster* raw = nullptr;
  uint32_t a = 0;
  bool stopped = false;
  options.on_step = [&](uint32_t node, std::string_view step) {
    if (node != 5 || step != "abort" || stopped) return;
    stopped = true;
    raw->Stop(5);
    raw->Stop(a);
  };
  ASSIGN_OR_RETURN(std::unique_ptr<SimCluster> started, SimCluster::Start(options));
  SimCluster& cluster = *started;
  raw = &cluster;
  const coordinator::Configuration configuration = cluster.configuration();
  // Primaries a and b (not the CM, not the coordinator) whose backups survive the loss of 5 and a; a's
  // backup is not the CM, which node 5 needs for its lease.
  uint32_t b = 0, backup_a = 0, backup_b = 0;
  for (uint32_t x : {2u, 3u, 4u}) {
    for (uint32_t y : {2u, 3u, 4u}) {
      if (x == y || b != 0) continue;
      ASSIGN_OR_RETURN(uint32_t bx, BackupOfOwnRegion(configuration, x));
      ASSIGN_OR_RETURN(uint32_t by, BackupOfOwnRegion(configuration, y));
      if (bx == 1 || bx == 5 || bx == y || by == 5 || by == x) continue;  // node 5 is cut off from bx alone
      a = x, b = y, backup_a = bx, backup_b = by;
    }
  }
  if (b == 0) return absl::FailedPreconditionError("no two primaries whose backups survive");
  ASSIGN_OR_RETURN(object::ObjectRef on_a, CommitNewObject(cluster, /*coordinator=*/1, a, "v0"));
  ASSIGN_OR_RETURN(object::ObjectRef on_b, CommitNewObject(cluster, /*coordinator=*/1, b, "v0"));
  cluster.scheduler().RunFor(absl::Milliseconds(5));

  cluster.network().Partition(5, backup_a);
  auto commit = std::make_shared<absl::Status>(absl::UnknownError("not returned"));
  absl::Status posted = cluster.txns(5).Post(0, [on_a, on_b, commit](txn::TxnThread& t) {
    std::shared_ptr<txn::TxState> tx = t.Begin();
    for (const object::ObjectRef& ref : {on_a, on_b}) {
      if (absl::Status s = t.Write(*tx, ref, "v1"); !s.ok()) {
        *commit = s;
        return;
      }
    }
    t.Commit(tx, [tx, commit](absl::Status s) { *commit = s; });
  });
  RETURN_IF_ERROR(posted);
  for (int i = 0; i < 10000 && !stopped; ++i) cluster.scheduler().RunFor(absl::Milliseconds(1));
  if (!stopped) return absl::InternalError(absl::StrCat("node 5's commit never gave up on node ", backup_a));
  const uint64_t records_at_backup_b = SumOverThreads(cluster, backup_b, [&](txn::TxnThread& t) {
    return t.participant().BackupRecordsFor(on_b.address.region);
  });
  if (records_at_backup_b != 1) {
    return absl::InternalError(absl::StrCat("node ", b, "'s backup ", backup_b, " holds ", records_at_backup_b,
                                            " records of the transaction, not 1; the commit: ", commit->ToString()));
  }
  cluster.Record(absl::StrCat("nodes 5 and ", a, " stopped during COMMIT-BACKUP"));

  return AfterRecovery(cluster, {on_a, on_b});
}

TEST(TxnRecoveryTest, ACoordinatorThatDiesWithAPrimaryDuringCommitBackupIsAbortedEverywhere) {
  for (uint64_t seed : Seeds()) ExpectAllOrNothing(seed, CrashCoordinatorAndPrimary, "v0");
}

// The coordinator and the primaries of both regions it writes die together (7 nodes, f = 1, node 7 the
// coordinator): nothing is locked anywhere any more, and only backups are left, promoted. Either
//  - at COMMIT-BACKUP, which reached b's backup only (a's is cut off): a's promoted backup never had the
//    record, so no COMMIT-PRIMARY can have gone out: it aborts everywhere; or
//  - at truncation, after every primary installed it, which reached a's backup only (b's is cut off):
//    a's backup applied and forgot it, b's still holds its record: it commits everywhere. Only the
//    coordinator's mark tells the two apart (a's backup has nothing either way).
absl::StatusOr<DoubleFailureOutcome> CrashCoordinatorAndBothPrimaries(uint64_t seed, bool at_truncation) {
  SimClusterOptions options;
  options.seed = seed;
  options.nodes = 7;
  SimCluster* raw = nullptr;
  uint32_t a = 0, b = 0, backup_a = 0, backup_b = 0;
  bool stopped = false, cut = false;
  options.on_step = [&](uint32_t node, std::string_view step) {
    if (node != 7 || a == 0) return;
    if (!at_truncation && step == "abort" && !stopped) {
      stopped = true;
      for (uint32_t n : {7u, a, b}) raw->Stop(n);
    }
    if (at_truncation && step == "truncate" && !cut) {
      cut = true;
      raw->network().Partition(7, backup_b);
    }
  };
  ASSIGN_OR_RETURN(std::unique_ptr<SimCluster> started, SimCluster::Start(options));
  SimCluster& cluster = *started;
  raw = &cluster;
  const coordinator::Configuration configuration = cluster.configuration();
  for (uint32_t x = 2; x <= 6 && a == 0; ++x) {
    for (uint32_t y = 2; y <= 6 && a == 0; ++y) {
      if (x == y) continue;
      ASSIGN_OR_RETURN(uint32_t bx, BackupOfOwnRegion(configuration, x));
      ASSIGN_OR_RETURN(uint32_t by, BackupOfOwnRegion(configuration, y));
      // Both backups survive, neither is the CM (node 7 needs it for its lease), they differ (one is cut
      // off alone).
      const std::set<uint32_t> dying = {1, 7, x, y};
      if (dying.contains(bx) || dying.contains(by) || bx == by) continue;
      a = x, b = y, backup_a = bx, backup_b = by;
    }
  }
  if (a == 0) return absl::FailedPreconditionError("no two primaries whose backups survive");
  const uint32_t primary_a = a;
  a = 0;  // the steps of the setup's commits are not ours
  ASSIGN_OR_RETURN(object::ObjectRef on_a, CommitNewObject(cluster, /*coordinator=*/1, primary_a, "v0"));
  ASSIGN_OR_RETURN(object::ObjectRef on_b, CommitNewObject(cluster, /*coordinator=*/1, b, "v0"));
  cluster.scheduler().RunFor(absl::Milliseconds(5));
  a = primary_a;

  if (!at_truncation) cluster.network().Partition(7, backup_a);
  auto commit = std::make_shared<absl::Status>(absl::UnknownError("not returned"));
  RETURN_IF_ERROR(cluster.txns(7).Post(0, [on_a, on_b, commit](txn::TxnThread& t) {
    std::shared_ptr<txn::TxState> tx = t.Begin();
    for (const object::ObjectRef& ref : {on_a, on_b}) {
      if (absl::Status s = t.Write(*tx, ref, "v1"); !s.ok()) {
        *commit = s;
        return;
      }
    }
    t.Commit(tx, [tx, commit](absl::Status s) { *commit = s; });
  }));
  auto records_at = [&](uint32_t node, const object::ObjectRef& ref) {
    return SumOverThreads(cluster, node, [&](txn::TxnThread& t) {
      return t.participant().BackupRecordsFor(ref.address.region);
    });
  };
  if (at_truncation) {
    // Committed, a's backup applied its record at truncation, b's (cut off) still holds it.
    auto truncated_at_a_only = [&] {
      return commit->ok() && records_at(backup_a, on_a) == 0 && records_at(backup_b, on_b) == 1;
    };
    for (int i = 0; i < 10000 && !truncated_at_a_only(); ++i) cluster.scheduler().RunFor(absl::Milliseconds(1));
    if (!truncated_at_a_only()) {
      return absl::InternalError(absl::StrCat("the truncation never reached node ", backup_a, " alone; the commit: ",
                                              commit->ToString()));
    }
    for (uint32_t n : {7u, a, b}) cluster.Stop(n);
  } else {
    for (int i = 0; i < 10000 && !stopped; ++i) cluster.scheduler().RunFor(absl::Milliseconds(1));
    if (!stopped) return absl::InternalError(absl::StrCat("node 7's commit never gave up on node ", backup_a));
    if (records_at(backup_b, on_b) != 1 || records_at(backup_a, on_a) != 0) {
      return absl::InternalError(absl::StrCat("the COMMIT-BACKUP did not reach node ", backup_b, " alone"));
    }
  }
  cluster.Record(absl::StrCat("nodes 7, ", a, " and ", b, " stopped ", at_truncation ? "at truncation" : "at COMMIT-BACKUP"));
  return AfterRecovery(cluster, {on_a, on_b});
}

TEST(TxnRecoveryTest, ACoordinatorThatDiesWithEveryPrimaryDuringCommitBackupIsAbortedEverywhere) {
  for (uint64_t seed : Seeds()) {
    ExpectAllOrNothing(seed, [](uint64_t s) { return CrashCoordinatorAndBothPrimaries(s, false); }, "v0");
  }
}

TEST(TxnRecoveryTest, ACoordinatorThatDiesWithEveryPrimaryDuringTruncationIsCommittedEverywhere) {
  for (uint64_t seed : Seeds()) {
    ExpectAllOrNothing(seed, [](uint64_t s) { return CrashCoordinatorAndBothPrimaries(s, true); }, "v1");
  }
}

// The status node `from` (thread 0) gets for a recovery request to node `to`.
absl::Status Ask(SimCluster& cluster, uint32_t from, uint32_t to, msg::MessageType type, std::string request) {
  auto answer = std::make_shared<std::optional<absl::Status>>();
  absl::Status posted = cluster.txns(from).Post(0, [to, type, request, answer](txn::TxnThread& t) {
    absl::Status called = t.messenger().Call(to, type, request, absl::Seconds(1),
                                             [answer](absl::StatusOr<std::string_view> r) { *answer = r.status(); });
    if (!called.ok()) *answer = called;
    t.messenger().Flush().IgnoreError();
  });
  if (!posted.ok()) return posted;
  for (int i = 0; i < 1000 && !answer->has_value(); ++i) cluster.scheduler().RunFor(absl::Milliseconds(1));
  return answer->value_or(absl::DeadlineExceededError("no answer"));
}

// Bad recovery requests get a clear error and change nothing: only the CM of the member's own
// configuration may ask, a configuration the member has not fenced yet is not answered, a coordinator
// that is a member is not recovered, and malformed bytes are refused.
TEST(TxnRecoveryTest, RecoveryRequestsThatAreNotTheCmsOrNotForThisConfigurationAreRefused) {
  SimClusterOptions options;
  options.seed = Seeds().front();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SimCluster> started, SimCluster::Start(options));
  SimCluster& cluster = *started;
  const uint64_t epoch = cluster.configuration().epoch();
  ASSERT_EQ(cluster.configuration().manager_id(), 1u);
  // A transaction `coordinator` began in the current configuration.
  auto resolve = [epoch](uint64_t at, uint32_t coordinator) {
    return txn::EncodeResolveRequest({txn::ResolveAction::kAbort, at, txn::TxnId{epoch, coordinator, 0, 1}});
  };
  auto expect = [](const absl::Status& status, absl::StatusCode code, std::string_view says) {
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_NE(std::string(status.message()).find(says), std::string::npos) << status;
  };
  expect(Ask(cluster, 2, 3, txn::kResolveMessage, resolve(epoch, 9)), absl::StatusCode::kFailedPrecondition,
         "node 2 is not the configuration manager");
  expect(Ask(cluster, 1, 2, txn::kResolveMessage, resolve(epoch - 1, 9)), absl::StatusCode::kFailedPrecondition,
         "is stale");
  expect(Ask(cluster, 1, 2, txn::kOrphansMessage, txn::EncodeOrphansRequest({epoch + 1})),
         absl::StatusCode::kUnavailable, "has not fenced configuration");
  expect(Ask(cluster, 1, 2, txn::kResolveMessage, resolve(epoch, 3)), absl::StatusCode::kFailedPrecondition,
         "is a member");
  expect(Ask(cluster, 1, 2, txn::kResolveMessage, resolve(epoch, 9).substr(0, 20)),
         absl::StatusCode::kInvalidArgument, "malformed recovery message");
  // The CM's own request in its configuration is answered (node 9 never coordinated anything).
  EXPECT_OK(Ask(cluster, 1, 2, txn::kResolveMessage, resolve(epoch, 9)));
  EXPECT_OK(Ask(cluster, 1, 2, txn::kOrphansMessage, txn::EncodeOrphansRequest({epoch})));
}

}  // namespace
}  // namespace fathom::sim
