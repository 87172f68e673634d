// The commit protocol under faults at a chosen step, on the replayable simulation (each seed runs twice
// and must replay). Node 1 coordinates a transaction that writes one object in node 2's memory and one in
// node 3's; node 1 is both regions' backup (the CM's placement for three nodes and f = 1, checked below).
#include <cstdint>
#include <string>
#include <functional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/sim/seeds.h"
#include "tests/sim/sim_cluster.h"
#include "tests/sim/sim_probes.h"
#include "txn/txn.h"
#include "txn/txn_thread.h"

namespace fathom::sim {
namespace {

// What one run leaves behind, for the assertions and the replay check.
struct Outcome {
  absl::Status commit;
  size_t backup_log_entries = 0;   // node 1's participants: records it still holds
  uint64_t set_aside_to_2 = 0;     // room node 1 still keeps aside in its rings to node 2 and 3
  uint64_t set_aside_to_3 = 0;
  std::string truncation_steps;    // "truncate_withheld", "truncate", comma-separated in order
  uint64_t redeliveries = 0;       // node 1's records sent again after their connection dropped them unread
  uint64_t duplicate_commits = 0;  // node 3's: COMMIT-PRIMARY copies it had handled already
  absl::StatusOr<std::string> three_after = absl::UnknownError("not read");  // node 3's object, read back
  uint64_t history = 0;
};

struct Scenario {
  // `fault` runs on node 1's thread the moment the transaction reaches `fault_step`.
  std::string_view fault_step = "commit_primary";
  std::function<void(SimCluster&)> fault;
  std::function<void(SimCluster&)> after_commit;  // if set, once the commit has returned
  // The transaction reads node 2's object first, and node 2 overwrites it before the commit: node 2
  // refuses the LOCK, node 3 grants it, and the transaction aborts.
  bool stale_read_of_two = false;
  // Long enough, a partitioned node 3 stays a member (and the primary of its region) throughout.
  absl::Duration lease_period = SimClusterOptions().lease_period;
};

absl::StatusOr<Outcome> RunCommit(uint64_t seed, const Scenario& scenario) {
  SimCluster* raw = nullptr;
  bool armed = false;
  Outcome outcome;
  SimClusterOptions options;
  options.seed = seed;
  options.lease_period = scenario.lease_period;
  options.on_step = [&](uint32_t node, std::string_view step) {
    if (node != 1 || !armed) return;
    if (step == scenario.fault_step) scenario.fault(*raw);
    if (step == "truncate" || step == "truncate_withheld") {
      if (!outcome.truncation_steps.empty()) outcome.truncation_steps += ",";
      outcome.truncation_steps += step;
      if (step == "truncate") armed = false;
    }
  };
  auto started = SimCluster::Start(options);
  if (!started.ok()) return started.status();
  SimCluster& cluster = **started;
  raw = &cluster;
  for (uint32_t owner : {2, 3}) {
    absl::StatusOr<uint32_t> backup = BackupOfOwnRegion(cluster.configuration(), owner);
    if (!backup.ok()) return backup.status();
    if (*backup != 1) return absl::FailedPreconditionError(absl::StrCat("node ", owner, "'s region is not backed up by node 1"));
  }
  // The two objects, committed before any fault.
  txn::Transaction setup = cluster.txns(1).Begin(0);
  auto on_two = setup.Alloc(16, txn::AllocHint{.node = 2});
  if (!on_two.ok()) return on_two.status();
  auto on_three = setup.Alloc(16, txn::AllocHint{.node = 3});
  if (!on_three.ok()) return on_three.status();
  if (absl::Status s = setup.Write(*on_two, "two-0"); !s.ok()) return s;
  if (absl::Status s = setup.Write(*on_three, "three-0"); !s.ok()) return s;
  if (absl::Status s = setup.Commit(); !s.ok()) return s;
  cluster.scheduler().RunFor(absl::Milliseconds(5));  // the setup's truncations go out

  armed = true;
  txn::Transaction tx = cluster.txns(1).Begin(0);
  if (scenario.stale_read_of_two) {
    if (auto read = tx.Read(*on_two); !read.ok()) return read.status();
    txn::Transaction other = cluster.txns(2).Begin(0);
    if (absl::Status s = other.Write(*on_two, "two-2"); !s.ok()) return s;
    if (absl::Status s = other.Commit(); !s.ok()) return s;
  }
  outcome.commit = tx.Write(*on_two, "two-1");
  if (outcome.commit.ok()) outcome.commit = tx.Write(*on_three, "three-1");
  if (outcome.commit.ok()) outcome.commit = tx.Commit();
  cluster.network().set_drop_probability(0);  // a fault that drops ends with the commit
  cluster.Record(absl::StrCat("commit: ", outcome.commit.ToString()));
  if (scenario.after_commit) scenario.after_commit(cluster);
  // Past the fabric's operation timeout (a write lost in a partition fails then) and the truncation delay.
  cluster.scheduler().RunFor(absl::Seconds(6));
  {
    txn::Transaction read = cluster.txns(2).Begin(0);
    outcome.three_after = read.Read(*on_three);
    if (outcome.three_after.ok()) {
      if (absl::Status s = read.Commit(); !s.ok()) outcome.three_after = s;
    }
  }

  node::Node& one = cluster.node(1);
  outcome.backup_log_entries =
      SumOverThreads(cluster, 1, [](txn::TxnThread& t) { return t.participant().log_entries(); });
  outcome.redeliveries = SumOverThreads(cluster, 1, [](txn::TxnThread& t) { return t.stats().redeliveries; });
  outcome.duplicate_commits =
      SumOverThreads(cluster, 3, [](txn::TxnThread& t) { return t.participant().stats().duplicate_commits; });
  auto coordinator_thread = one.Thread(0);
  if (!coordinator_thread.ok()) return coordinator_thread.status();
  msg::Messenger& messenger = (*coordinator_thread)->messenger();
  if (msg::RingSender* to_two = messenger.sender(2)) outcome.set_aside_to_2 = to_two->set_aside();
  if (msg::RingSender* to_three = messenger.sender(3)) outcome.set_aside_to_3 = to_three->set_aside();
  outcome.history = cluster.history();
  return outcome;
}

// COMMIT-PRIMARY reaches node 2 but not node 3 (partitioned from node 1). The transaction is committed
// (node 2 acknowledged), but node 3 still holds its lock and only the backup's record can commit its
// object: node 1 must keep that record (no truncation until every primary acknowledged).
TEST(CommitFaultsTest, NoReplicaForgetsATransactionAPrimaryDidNotAcknowledge) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    // Node 3 stays a member: cut off for good, its lease would lapse, and once the CM removed it, the
    // promoted backup (node 1) would install the write and truncate the record rightly.
    Scenario partition{.fault = [](SimCluster& cluster) { cluster.network().Partition(1, 3); },
                       .lease_period = absl::Seconds(20)};
    absl::StatusOr<Outcome> first = RunCommit(seed, partition);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<Outcome> second = RunCommit(seed, partition);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_TRUE(first->commit.ok()) << first->commit;
    EXPECT_EQ(first->truncation_steps, "truncate_withheld");
    EXPECT_GT(first->backup_log_entries, 0u) << "node 1 forgot the record node 3's object needs";
  }
}

// The same, but the partition heals before node 3's lease lapses: the COMMIT-PRIMARY that did not reach
// node 3 is sent again over a new connection, so node 3 installs the write and unlocks its object, and
// only then is the transaction truncated everywhere. (It was never sent again: node 3 kept the object
// locked, and its log-epoch lock, for good.)
TEST(CommitFaultsTest, ACommitPrimaryThatDidNotArriveIsSentAgain) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    Scenario healed{.fault = [](SimCluster& cluster) { cluster.network().Partition(1, 3); },
                    .after_commit = [](SimCluster& cluster) { cluster.network().Heal(1, 3); }};
    absl::StatusOr<Outcome> first = RunCommit(seed, healed);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<Outcome> second = RunCommit(seed, healed);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_TRUE(first->commit.ok()) << first->commit;
    EXPECT_EQ(first->truncation_steps, "truncate_withheld,truncate");
    ASSERT_TRUE(first->three_after.ok()) << first->three_after.status();
    EXPECT_EQ(first->three_after->substr(0, 7), "three-1");
    EXPECT_EQ(first->backup_log_entries, 0u) << "node 1 kept a record of a transaction every primary has";
  }
}

// COMMIT-PRIMARY reaches no primary (every operation is dropped until the commit returns): the outcome is unknown,
// nothing more is sent, and the room set aside for the ABORTs goes back (it leaked, and a ring that
// leaks enough refuses every commit as "log full").
TEST(CommitFaultsTest, AnUnknownOutcomeGivesBackItsLogRoom) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    // Until the commit returns (Run ends the drops then).
    Scenario drop_everything{.fault = [](SimCluster& cluster) { cluster.network().set_drop_probability(1.0); }};
    absl::StatusOr<Outcome> first = RunCommit(seed, drop_everything);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<Outcome> second = RunCommit(seed, drop_everything);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_TRUE(absl::IsUnavailable(first->commit)) << first->commit;
    EXPECT_TRUE(txn::MayHaveCommitted(first->commit)) << "every backup holds the record: it commits";
    EXPECT_EQ(first->set_aside_to_2, 0u);
    EXPECT_EQ(first->set_aside_to_3, 0u);
  }
}

// Node 2 refuses the LOCK (its object changed after the transaction read it), node 3 grants it, and the
// ABORT to node 3 is lost in a partition that heals soon after: it is sent again over a new connection, so
// node 3 unlocks its object. (It was sent once: node 3 kept the object locked for good.)
TEST(CommitFaultsTest, AnAbortThatDidNotArriveIsSentAgain) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    Scenario lost_abort{.fault_step = "abort",
                        .fault = [](SimCluster& cluster) { cluster.network().Partition(1, 3); },
                        .after_commit = [](SimCluster& cluster) { cluster.network().Heal(1, 3); },
                        .stale_read_of_two = true};
    absl::StatusOr<Outcome> first = RunCommit(seed, lost_abort);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<Outcome> second = RunCommit(seed, lost_abort);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_TRUE(absl::IsAborted(first->commit)) << first->commit;
    EXPECT_FALSE(txn::MayHaveCommitted(first->commit)) << "refused at LOCK: nothing to commit anywhere";
    ASSERT_TRUE(first->three_after.ok()) << first->three_after.status();
    EXPECT_EQ(first->three_after->substr(0, 7), "three-0");
  }
}

// Node 3's first step of a disconnect from node 1 (its messenger forgets node 1, after handling what was
// in the ring). Every node runs on this thread, so it can happen between node 1's decision at a step and
// its write: the write completes, node 1 counts it written, and node 3 never reads it.
void ThreeStopsReadingOne(SimCluster& cluster) {
  absl::StatusOr<node::NodeThread*> receiver = cluster.node(3).Thread(0);
  ASSERT_TRUE(receiver.ok());
  ASSERT_TRUE((*receiver)->messenger().RemovePeer(1).ok());
}

// The rest of the disconnect, and the connection made again (as the membership follower does).
void ThreeReconnectsToOne(SimCluster& cluster) {
  ASSERT_TRUE(cluster.node(3).Disconnect(1).ok());
  absl::Status joined = cluster.node(3).JoinInProcess(cluster.node(1));
  ASSERT_TRUE(joined.ok()) << joined;
}

// Node 3 drops its connection from node 1 (as a member without a lease does, membership.cc) just before
// node 1's COMMIT-PRIMARY lands. When the connection is made again, node 1 learns the record was not
// consumed and sends it again (as COMMIT-PRIMARY-AGAIN), so node 3 installs the write and unlocks its
// object. (It was lost: node 3 kept the object locked for good, and every later transaction on it aborted.)
TEST(CommitFaultsTest, ACommitPrimaryTheReceiverDiscardedUnreadIsDeliveredAgain) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    Scenario discarded{.fault = ThreeStopsReadingOne, .after_commit = ThreeReconnectsToOne};
    absl::StatusOr<Outcome> first = RunCommit(seed, discarded);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<Outcome> second = RunCommit(seed, discarded);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_TRUE(first->commit.ok()) << first->commit;
    EXPECT_GT(first->redeliveries, 0u) << "the premise: node 1 sent a record again";
    ASSERT_TRUE(first->three_after.ok()) << first->three_after.status();
    EXPECT_EQ(first->three_after->substr(0, 7), "three-1");
    EXPECT_EQ(first->backup_log_entries, 0u) << "node 1 kept a record of a transaction every primary has";
  }
}

// The same with an ABORT (node 2 refuses the LOCK, node 3 granted it): the copy node 3 discarded unread
// goes again, and node 3 unlocks its object.
TEST(CommitFaultsTest, AnAbortTheReceiverDiscardedUnreadIsDeliveredAgain) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    Scenario discarded{.fault_step = "abort",
                       .fault = ThreeStopsReadingOne,
                       .after_commit = ThreeReconnectsToOne,
                       .stale_read_of_two = true};
    absl::StatusOr<Outcome> first = RunCommit(seed, discarded);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<Outcome> second = RunCommit(seed, discarded);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_TRUE(absl::IsAborted(first->commit)) << first->commit;
    EXPECT_GT(first->redeliveries, 0u) << "the premise: node 1 sent a record again";
    ASSERT_TRUE(first->three_after.ok()) << first->three_after.status();
    EXPECT_EQ(first->three_after->substr(0, 7), "three-0");
  }
}

}  // namespace
}  // namespace fathom::sim
