// Data recovery's pace on the replayable simulation (each seed runs twice and must replay). Node 2 holds
// 64 objects of 1000 bytes in its region and crashes; node 1, its backup, is promoted and copies the region
// to the new backup, node 3, at TxnOptions::fill_bytes_per_second. Meanwhile node 3 commits a write to one
// of 16 of the objects every 20 ms (virtual), in an order that crosses the copy's walk both ways.
//
// Asserted: the copy takes at least what its pace allows (it moved at least the objects' bytes) and, unpaced,
// much less, so the pace is what makes it slow; commits go on while it runs; afterwards every region's
// replicas are identical (the copy resumed where it stopped each time, and the commits that the walk had
// passed reached the new backup on their own).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "platform/base/status_macros.h"
#include "platform/base/status_test_macros.h"
#include "tests/sim/seeds.h"
#include "tests/sim/sim_cluster.h"
#include "tests/sim/sim_probes.h"
#include "txn/txn.h"

namespace fathom::sim {
namespace {

constexpr int kObjects = 64;
constexpr size_t kPayloadBytes = 1000;
constexpr uint64_t kPacedRate = 32 << 10;  // bytes per second: the objects alone take ~2 s
// What a paced copy may send at once after a pause (data_recovery.cc, kFillBurst).
constexpr absl::Duration kBurst = absl::Milliseconds(250);

struct Outcome {
  absl::Duration fill_time;         // from the configuration that names the new backup to the one marking it filled
  int commits_while_filling = 0;    // writes committed while a backup was still filling
  int failed_commits = 0;
  std::vector<std::string> differences;  // ReplicaDifferences once it settled
  bool filled = false;
  uint64_t history = 0;
};

int RegionsFilling(SimCluster& cluster) {
  int n = 0;
  const coordinator::Configuration now = cluster.configuration();
  for (const coordinator::RegionPlacement& r : now.regions()) n += r.filling_size() > 0;
  return n;
}

absl::StatusOr<Outcome> CrashAndFill(uint64_t seed, uint64_t fill_bytes_per_second) {
  SimClusterOptions options;
  options.seed = seed;
  options.fill_bytes_per_second = fill_bytes_per_second;
  ASSIGN_OR_RETURN(std::unique_ptr<SimCluster> started, SimCluster::Start(options));
  SimCluster& cluster = *started;
  std::vector<object::ObjectRef> refs;
  for (int batch = 0; batch < kObjects / 2; ++batch) {  // a record fits a ring message of the simulation (4 KiB)
    txn::Transaction setup = cluster.txns(3).Begin(0);
    for (int i = 0; i < 2; ++i) {
      ASSIGN_OR_RETURN(object::ObjectRef ref, setup.Alloc(kPayloadBytes, txn::AllocHint{.node = 2}));
      RETURN_IF_ERROR(setup.Write(ref, std::string(kPayloadBytes, static_cast<char>('a' + batch % 26))));
      refs.push_back(ref);
    }
    RETURN_IF_ERROR(setup.Commit());
  }
  ASSIGN_OR_RETURN(const uint32_t backup, BackupOfOwnRegion(cluster.configuration(), 2));
  const uint32_t region = refs[0].address.region;
  cluster.Stop(2);
  for (int i = 0; i < 4000 && RegionsFilling(cluster) == 0; ++i) cluster.scheduler().RunFor(absl::Milliseconds(5));
  if (RegionsFilling(cluster) == 0) return absl::DeadlineExceededError("no new backup was named after node 2 crashed");
  const absl::Time named = cluster.network().clock().Now();
  // The writes start once the promoted backup serves the region (until then they fail, and are retried).
  for (int i = 0; i < 4000 && !cluster.node(backup).Serves(region); ++i) {
    cluster.scheduler().RunFor(absl::Milliseconds(1));
  }
  if (!cluster.node(backup).Serves(region)) return absl::DeadlineExceededError("node 2's region was never served again");
  Outcome outcome;
  // The first and last eight objects, in the order first, last, second, second to last...: the walk goes
  // by address, so some writes land behind it and some ahead of it. The other 48 objects reach the new
  // backup only through the copy.
  for (int k = 0; k < 2000 && RegionsFilling(cluster) > 0; ++k) {
    const int i = k % 16;
    const object::ObjectRef& ref = refs[i % 2 == 0 ? i / 2 : kObjects - 1 - i / 2];
    txn::Transaction write = cluster.txns(3).Begin(0);
    absl::Status committed = write.Write(ref, std::string(kPayloadBytes, static_cast<char>('A' + k % 26)));
    if (committed.ok()) committed = write.Commit();
    cluster.Record(absl::StrCat("write ", k, ": ", committed.ToString()));
    if (!committed.ok()) {
      ++outcome.failed_commits;
    } else if (RegionsFilling(cluster) > 0) {
      ++outcome.commits_while_filling;
    }
    cluster.scheduler().RunFor(absl::Milliseconds(20));
  }
  outcome.filled = RegionsFilling(cluster) == 0;
  outcome.fill_time = cluster.network().clock().Now() - named;
  cluster.scheduler().RunFor(absl::Milliseconds(50));  // the last truncations reach the backups
  outcome.differences = ReplicaDifferences(cluster);
  outcome.history = cluster.history();
  return outcome;
}

absl::StatusOr<Outcome> CrashAndFillTwice(uint64_t seed, uint64_t fill_bytes_per_second) {
  ASSIGN_OR_RETURN(Outcome first, CrashAndFill(seed, fill_bytes_per_second));
  ASSIGN_OR_RETURN(Outcome second, CrashAndFill(seed, fill_bytes_per_second));
  if (first.history != second.history) return absl::InternalError("the two runs of one seed diverged");
  return first;
}

TEST(PacedFillTest, APacedCopyTakesItsTimeWhileCommitsGoOnAndEndsIdentical) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(Replay(seed));
    ASSERT_OK_AND_ASSIGN(Outcome paced, CrashAndFillTwice(seed, kPacedRate));
    ASSERT_TRUE(paced.filled) << "still filling after " << paced.fill_time;
    const absl::Duration floor =
        absl::Seconds(static_cast<double>(kObjects * kPayloadBytes) / static_cast<double>(kPacedRate)) - kBurst;
    EXPECT_GE(paced.fill_time, floor) << "the copy outran its pace";
    EXPECT_GE(paced.commits_while_filling, 20);
    EXPECT_EQ(paced.failed_commits, 0);
    EXPECT_TRUE(paced.differences.empty()) << absl::StrJoin(paced.differences, "\n");

    ASSERT_OK_AND_ASSIGN(Outcome unpaced, CrashAndFillTwice(seed, 0));
    ASSERT_TRUE(unpaced.filled);
    EXPECT_LT(unpaced.fill_time, floor / 4) << "unpaced, the copy is slow anyway: the test shows nothing";
    EXPECT_TRUE(unpaced.differences.empty()) << absl::StrJoin(unpaced.differences, "\n");
  }
}

}  // namespace
}  // namespace fathom::sim
