// The commit protocol under faults at a chosen step, on the replayable simulation (each seed runs twice
// and must replay). Node 1 coordinates a transaction that writes one object in node 2's memory and one in
// node 3's; node 1 is both regions' backup (the CM's placement for three nodes and f = 1, checked below).
#include <cstdint>
#include <string>
#include <functional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "coordinator/configuration.h"
#include "gtest/gtest.h"
#include "platform/memory/global_address.h"
#include "tests/sim/seeds.h"
#include "tests/sim/sim_cluster.h"
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
  std::string withheld_or_truncated;
  uint64_t history = 0;
};

// `fault` runs on node 1's thread the moment the transaction reaches COMMIT-PRIMARY.
absl::StatusOr<Outcome> RunCommit(uint64_t seed, const std::function<void(SimCluster&)>& fault) {
  SimCluster* raw = nullptr;
  bool armed = false;
  Outcome outcome;
  SimClusterOptions options;
  options.seed = seed;
  options.on_step = [&](uint32_t node, std::string_view step) {
    if (node != 1 || !armed) return;
    if (step == "commit_primary") fault(*raw);
    if (step == "truncate" || step == "truncate_withheld") {
      outcome.withheld_or_truncated = std::string(step);
      armed = false;
    }
  };
  auto started = SimCluster::Start(options);
  if (!started.ok()) return started.status();
  SimCluster& cluster = **started;
  raw = &cluster;
  const coordinator::Configuration configuration = cluster.configuration();  // a copy: the loop reads it
  for (const coordinator::RegionPlacement& r : configuration.regions()) {
    const uint32_t owner = memory::OwnerOfRegion(r.region_id());
    if (owner != 2 && owner != 3) continue;
    if (r.backups_size() != 1 || r.backups(0) != 1) {
      return absl::FailedPreconditionError(absl::StrCat("region ", r.region_id(), " is not backed up by node 1"));
    }
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
  outcome.commit = tx.Write(*on_two, "two-1");
  if (outcome.commit.ok()) outcome.commit = tx.Write(*on_three, "three-1");
  if (outcome.commit.ok()) outcome.commit = tx.Commit();
  cluster.network().set_drop_probability(0);  // a fault that drops ends with the commit
  cluster.Record(absl::StrCat("commit: ", outcome.commit.ToString()));
  // Past the fabric's operation timeout (a write lost in a partition fails then) and the truncation delay.
  cluster.scheduler().RunFor(absl::Seconds(6));

  node::Node& one = cluster.node(1);
  for (int t = 0; t < one.threads(); ++t) {
    auto thread = cluster.txns(1).Thread(t);
    if (!thread.ok()) return thread.status();
    outcome.backup_log_entries += (*thread)->participant().log_entries();
  }
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
    auto partition = [](SimCluster& cluster) { cluster.network().Partition(1, 3); };
    absl::StatusOr<Outcome> first = RunCommit(seed, partition);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<Outcome> second = RunCommit(seed, partition);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_TRUE(first->commit.ok()) << first->commit;
    EXPECT_EQ(first->withheld_or_truncated, "truncate_withheld");
    EXPECT_GT(first->backup_log_entries, 0u) << "node 1 forgot the record node 3's object needs";
  }
}

// COMMIT-PRIMARY reaches no primary (every operation is dropped until the commit returns): the outcome is unknown,
// nothing more is sent, and the room set aside for the ABORTs goes back (it leaked, and a ring that
// leaks enough refuses every commit as "log full").
TEST(CommitFaultsTest, AnUnknownOutcomeGivesBackItsLogRoom) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    // Until the commit returns (Run ends the drops then).
    auto drop_everything = [](SimCluster& cluster) { cluster.network().set_drop_probability(1.0); };
    absl::StatusOr<Outcome> first = RunCommit(seed, drop_everything);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<Outcome> second = RunCommit(seed, drop_everything);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->history, second->history) << "the runs diverged";
    EXPECT_TRUE(absl::IsUnavailable(first->commit)) << first->commit;
    EXPECT_EQ(first->set_aside_to_2, 0u);
    EXPECT_EQ(first->set_aside_to_3, 0u);
  }
}

}  // namespace
}  // namespace fathom::sim
