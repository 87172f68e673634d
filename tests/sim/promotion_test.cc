// Region promotion and data recovery on the replayable simulation (each seed runs twice and must replay).
// Node 2 crashes; the CM (node 1) removes it when its lease lapses, names the backup of node 2's region,
// node 1, its primary and node 3 its new backup, filling (coordinator::DropReplicasOf). Node 1 serves its
// copy once no record of the region is pending, republishes itself so node 3 reads the region from it,
// and copies the region to node 3 (TransactionService::FillBackups).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "platform/memory/global_address.h"
#include "tests/sim/seeds.h"
#include "tests/sim/sim_cluster.h"
#include "tests/sim/sim_probes.h"
#include "txn/txn.h"

namespace fathom::sim {
namespace {

constexpr int kObjects = 8;

struct Outcome {
  absl::Status in_flight_commit;             // the commit node 2 crashed under (if any)
  uint32_t primary_after = 0;                // of node 2's region, in the configuration after the crash
  std::vector<absl::StatusOr<std::string>> from_one, from_three;  // every object, read by node 1 and 3
  uint32_t new_backup = 0;                   // of node 2's region, after the crash (it fills first)
  int filling_after = -1;                    // regions still filling once the run settled
  std::vector<std::string> new_backup_copy;  // every object's slot in the new backup's copy, after the fill
  absl::Status write_after;                  // a write to node 2's former region, after the fill
  absl::Status alloc_near;                   // a new object near one of node 2's former region
  absl::Status free_after;                   // freeing an object of node 2's former region, after the fill
  uint64_t install_errors = ~uint64_t{0};    // at node 1 (the promoted primary), e.g. a free it could not take
  uint64_t history = 0;
};

// `crash_at_step`: empty, node 2 crashes between transactions; else it crashes when node 3's transaction
// (writing object 0, and `also_on_three` an object of node 3's region too) reaches that commit step.
// `hold_truncation`: node 3 (the coordinator) is cut off from node 1 for 60 ms from node 2's removal, so
// the truncation that installs the in-flight commit at node 1 comes after node 1 was promoted.
absl::StatusOr<Outcome> CrashNodeTwo(uint64_t seed, std::string_view crash_at_step, bool also_on_three,
                                     bool hold_truncation = false) {
  SimCluster* raw = nullptr;
  bool armed = false;
  SimClusterOptions options;
  options.seed = seed;
  if (hold_truncation) options.lease_period = absl::Milliseconds(200);  // outlasts the 60 ms cut
  options.on_step = [&](uint32_t node, std::string_view step) {
    if (!armed || node != 3 || step != crash_at_step) return;
    armed = false;
    raw->Stop(2);
  };
  auto started = SimCluster::Start(options);
  if (!started.ok()) return started.status();
  SimCluster& cluster = **started;
  raw = &cluster;
  absl::StatusOr<uint32_t> backup = BackupOfOwnRegion(cluster.configuration(), 2);
  if (!backup.ok()) return backup.status();
  if (*backup != 1) return absl::FailedPreconditionError("node 2's region is not backed up by node 1");
  enum { kWaiting, kCut, kHealed } cut = hold_truncation ? kWaiting : kHealed;
  absl::Time heal_at = absl::InfiniteFuture();
  cluster.scheduler().AddTask(0, [&cluster, &cut, &heal_at]() -> size_t {
    const absl::Time now = cluster.network().clock().Now();
    if (cut == kWaiting && cluster.stopped(2) && coordinator::FindMember(cluster.configuration(), 2) == nullptr) {
      cluster.network().Partition(3, 1);
      cut = kCut;
      heal_at = now + absl::Milliseconds(60);
      return 1;
    }
    if (cut != kCut || now < heal_at) return 0;
    cluster.network().Heal(3, 1);
    cut = kHealed;
    return 1;
  });

  // Objects in node 2's region, each committed by node 3 (and so in node 1's copy once truncated).
  std::vector<object::ObjectRef> refs;
  object::ObjectRef on_three;
  {
    txn::Transaction setup = cluster.txns(3).Begin(0);
    for (int i = 0; i < kObjects; ++i) {
      auto ref = setup.Alloc(16, txn::AllocHint{.node = 2});
      if (!ref.ok()) return ref.status();
      if (absl::Status s = setup.Write(*ref, absl::StrCat("v0-", i)); !s.ok()) return s;
      refs.push_back(*ref);
    }
    auto ref = setup.Alloc(16, txn::AllocHint{.node = 3});
    if (!ref.ok()) return ref.status();
    on_three = *ref;
    if (absl::Status s = setup.Write(on_three, "three-0"); !s.ok()) return s;
    if (absl::Status s = setup.Commit(); !s.ok()) return s;
  }
  Outcome outcome;
  if (crash_at_step.empty()) {
    cluster.Stop(2);
  } else {
    armed = true;
    txn::Transaction tx = cluster.txns(3).Begin(0);
    outcome.in_flight_commit = tx.Write(refs[0], "v1-0");
    if (outcome.in_flight_commit.ok() && also_on_three) outcome.in_flight_commit = tx.Write(on_three, "three-1");
    if (outcome.in_flight_commit.ok()) outcome.in_flight_commit = tx.Commit();
    cluster.Record(absl::StrCat("in-flight commit: ", outcome.in_flight_commit.ToString()));
    if (armed) return absl::InternalError(absl::StrCat("the commit never reached step ", std::string(crash_at_step)));
  }
  const uint32_t region = refs[0].address.region;
  for (int i = 0; i < 2000 && !cluster.node(1).Serves(region); ++i) cluster.scheduler().RunFor(absl::Milliseconds(5));
  const coordinator::Configuration after = cluster.configuration();
  if (const coordinator::RegionPlacement* placed = coordinator::FindRegion(after, region); placed != nullptr) {
    outcome.primary_after = placed->primary();
  }
  if (!cluster.node(1).Serves(region)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "node 1 never served node 2's region: it holds ",
        SumOverThreads(cluster, 1, [](txn::TxnThread& t) { return t.participant().log_entries(); }),
        " records; node 3 owes ", SumOverThreads(cluster, 3, [](txn::TxnThread& t) { return t.truncator().pending(); }),
        " truncations; connected to ", absl::StrJoin(cluster.node(3).connected_peers(), ","), ", failed ",
        absl::StrJoin(cluster.node(3).failed_peers(), ",")));
  }
  cluster.scheduler().RunFor(absl::Milliseconds(5));  // node 3 imports it
  for (uint32_t reader : {1u, 3u}) {
    for (const object::ObjectRef& ref : refs) {
      txn::Transaction tx = cluster.txns(reader).Begin(0);
      absl::StatusOr<std::string> read = tx.Read(ref);
      cluster.Record(absl::StrCat("node ", reader, " reads ", ref.address.ToString(), ": ",
                                  read.ok() ? *read : read.status().ToString()));
      (reader == 1 ? outcome.from_one : outcome.from_three).push_back(std::move(read));
    }
  }
  // The region lost its backup (node 1, now its primary): node 3 is its new backup, filled by node 1.
  auto filling = [&cluster] {
    int n = 0;
    const coordinator::Configuration now = cluster.configuration();
    for (const coordinator::RegionPlacement& r : now.regions()) n += r.filling_size() > 0;
    return n;
  };
  for (int i = 0; i < 2000 && filling() > 0; ++i) cluster.scheduler().RunFor(absl::Milliseconds(5));
  outcome.filling_after = filling();
  const coordinator::Configuration settled = cluster.configuration();
  if (const coordinator::RegionPlacement* r = coordinator::FindRegion(settled, region);
      r != nullptr && r->backups_size() == 1) {
    outcome.new_backup = r->backups(0);
  }
  txn::Transaction write = cluster.txns(3).Begin(0);
  outcome.write_after = write.Write(refs[1], "v2-1");
  if (outcome.write_after.ok()) outcome.write_after = write.Commit();
  {
    // "Near" an object means where its region is served now, not on its owner (node 2 is gone).
    txn::Transaction alloc = cluster.txns(3).Begin(0);
    absl::StatusOr<object::ObjectRef> added = alloc.Alloc(16, txn::AllocHint{.near = &refs[2]});
    outcome.alloc_near = added.status();
    if (added.ok()) outcome.alloc_near = alloc.Write(*added, "near");
    if (outcome.alloc_near.ok()) outcome.alloc_near = alloc.Commit();
  }
  {
    // The promoted primary rebuilt its allocator from the copy: the slot goes back to it.
    txn::Transaction free = cluster.txns(3).Begin(0);
    outcome.free_after = free.Free(refs[kObjects - 1]);
    if (outcome.free_after.ok()) outcome.free_after = free.Commit();
  }
  cluster.scheduler().RunFor(absl::Milliseconds(20));  // its truncation reaches the new backup
  outcome.install_errors =
      SumOverThreads(cluster, 1, [](txn::TxnThread& t) { return t.participant().stats().errors; });
  for (const object::ObjectRef& ref : refs) {
    outcome.new_backup_copy.push_back(outcome.new_backup == 0 ? "" : BackupCopyOf(cluster, outcome.new_backup, ref));
  }
  outcome.history = cluster.history();
  return outcome;
}

// CrashNodeTwo twice with the same seed: the simulation must replay the same history.
absl::StatusOr<Outcome> CrashNodeTwoTwice(uint64_t seed, std::string_view crash_at_step, bool also_on_three,
                                          bool hold_truncation = false) {
  absl::StatusOr<Outcome> first = CrashNodeTwo(seed, crash_at_step, also_on_three, hold_truncation);
  if (!first.ok()) return first.status();
  absl::StatusOr<Outcome> second = CrashNodeTwo(seed, crash_at_step, also_on_three, hold_truncation);
  if (!second.ok()) return second.status();
  if (first->history != second->history) return absl::InternalError("the two runs of one seed diverged");
  return first;
}

void ExpectEveryObject(const Outcome& outcome, std::string_view first) {
  // The new backup holds every object (copied by the primary, or by the commit after it).
  EXPECT_EQ(outcome.filling_after, 0) << "a new backup was never filled";
  EXPECT_EQ(outcome.new_backup, 3u);
  EXPECT_OK(outcome.write_after);
  EXPECT_OK(outcome.alloc_near);
  EXPECT_OK(outcome.free_after);
  EXPECT_EQ(outcome.install_errors, 0u) << "the promoted primary failed to install (free) something";
  ASSERT_EQ(outcome.new_backup_copy.size(), static_cast<size_t>(kObjects));
  for (int i = 0; i < kObjects - 1; ++i) {  // the last one was freed
    const std::string expected = i == 0 ? std::string(first) : i == 1 ? "v2-1" : absl::StrCat("v0-", i);
    EXPECT_NE(outcome.new_backup_copy[i].find(expected), std::string::npos)
        << "object " << i << " is not in the new backup's copy";
  }
  for (const auto* reads : {&outcome.from_one, &outcome.from_three}) {
    ASSERT_EQ(reads->size(), static_cast<size_t>(kObjects));
    for (int i = 0; i < kObjects; ++i) {
      ASSERT_TRUE((*reads)[i].ok()) << "object " << i << ": " << (*reads)[i].status();
      EXPECT_EQ(*(*reads)[i], i == 0 ? std::string(first) : absl::StrCat("v0-", i)) << "object " << i;
    }
  }
}

// A backup holds its copy of every region it backs up before any write reaches it: making one (zeroed
// registered memory) while a promotion waits for it cost ~35 ms per 64 MiB region of unavailability.
TEST(PromotionTest, EveryBackupCopyIsMadeBeforeAnyWrite) {
  SimClusterOptions options;
  options.seed = 1;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SimCluster> cluster, SimCluster::Start(options));
  auto copies_made = [&] {
    const std::shared_ptr<const memory::RegionMap> map = cluster->node(1).region_directory().Current();
    size_t backed = 0;
    for (uint32_t id = 1; id <= static_cast<uint32_t>(cluster->size()); ++id) {
      backed += map->BackupRegionsOf(id).size();
      if (cluster->txns(id).backups().regions() != map->BackupRegionsOf(id).size()) return false;
    }
    return backed > 0;
  };
  EXPECT_TRUE(cluster->scheduler().RunUntil(copies_made, absl::Seconds(10)));
}

TEST(PromotionTest, TheBackupServesTheCommittedDataOfARegionWhosePrimaryCrashed) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    ASSERT_OK_AND_ASSIGN(Outcome first, CrashNodeTwoTwice(seed, "", false));
    EXPECT_EQ(first.primary_after, 1u);
    ExpectEveryObject(first, "v0-0");
  }
}

// Node 2 crashes once every backup holds COMMIT-BACKUP and node 3's COMMIT-PRIMARY goes out: the
// transaction is committed (node 3, the other primary, has it), and the promoted backup must install it
// before it serves the region (it gets the writes at truncation, which the coordinator sends once the
// crashed primary left).
TEST(PromotionTest, ACommitWhosePrimaryCrashedAfterCommitBackupIsInstalledByThePromotedBackup) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    ASSERT_OK_AND_ASSIGN(Outcome first, CrashNodeTwoTwice(seed, "commit_primary", /*also_on_three=*/true));
    EXPECT_OK(first.in_flight_commit);
    ExpectEveryObject(first, "v1-0");
  }
}

// The same, but the truncation reaches node 1 only after it was promoted: it must not serve the region
// before it has installed the commit (it would serve the old value, and a later write could be lost).
TEST(PromotionTest, APromotedBackupServesOnlyOnceItsPendingCommitsAreInstalled) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    ASSERT_OK_AND_ASSIGN(Outcome first, CrashNodeTwoTwice(seed, "commit_primary", true, /*hold_truncation=*/true));
    EXPECT_OK(first.in_flight_commit);
    ExpectEveryObject(first, "v1-0");
  }
}

// The same with node 2 the only primary: no primary acknowledged, so the coordinator cannot say whether
// it committed, but every backup holds the record, so it did: all of it, never a part.
TEST(PromotionTest, ACommitWithItsOnlyPrimaryCrashedIsNotLost) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    ASSERT_OK_AND_ASSIGN(Outcome first, CrashNodeTwoTwice(seed, "commit_primary", /*also_on_three=*/false));
    EXPECT_EQ(first.in_flight_commit.code(), absl::StatusCode::kUnavailable) << first.in_flight_commit;
    ExpectEveryObject(first, "v1-0");
  }
}

}  // namespace
}  // namespace fathom::sim
