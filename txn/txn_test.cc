// Transactions on embedded clusters (UCX shared memory, and SimFabric with torn copies and delays under a
// seed): commits are replicated and backups end byte-identical to their primaries; conflicts abort; lost
// updates and write skew cannot happen; the bank's total is conserved at every snapshot; bad input is
// refused.
#include "txn/txn.h"

#include <atomic>
#include <random>
#include <thread>

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/test_seed.h"
#include "txn/testing/txn_cluster.h"
#include "tests/workloads/support.h"

namespace fathom::txn {
namespace {

using object::ObjectRef;
using testing::TxnCluster;
using workloads::DecodeInt;
using workloads::EncodeInt;

using Fabric = testing::TestFabric;

server::EmbeddedClusterOptions ClusterOptions(Fabric fabric, uint64_t seed) {
  return testing::TestClusterOptions(fabric, seed, 4 << 20);
}

class TxnTest : public ::testing::TestWithParam<Fabric> {
 protected:
  void SetUp() override {
    seed_ = fabric::sim::TestSeed();
    auto cluster = TxnCluster::Start(ClusterOptions(GetParam(), seed_));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }
  TransactionService& txns(uint32_t node) { return cluster_->service(node); }

  // `count` objects holding `initial`, spread over the nodes, created by one transaction.
  std::vector<ObjectRef> CreateCounters(int count, int64_t initial) {
    Transaction tx = txns(1).Begin();
    std::vector<ObjectRef> refs;
    for (int i = 0; i < count; ++i) {
      auto ref = tx.Alloc(8, {.node = static_cast<uint32_t>(1 + i % cluster_->size())});
      EXPECT_TRUE(ref.ok()) << ref.status();
      if (!ref.ok()) return {};
      EXPECT_OK(tx.Write(*ref, EncodeInt(initial)));
      refs.push_back(*ref);
    }
    EXPECT_OK(tx.Commit());
    return refs;
  }
  int64_t ReadInt(uint32_t node, const ObjectRef& ref) {
    Transaction tx = txns(node).Begin();
    auto bytes = tx.Read(ref);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    if (!bytes.ok()) return INT64_MIN;
    EXPECT_OK(tx.Commit());
    return *DecodeInt(*bytes);
  }

  uint64_t seed_ = 0;
  std::unique_ptr<TxnCluster> cluster_;
};

TEST_P(TxnTest, CommitsAreReplicatedAndBackupsMatchTheirPrimaries) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  std::vector<ObjectRef> refs = CreateCounters(6, 7);
  ASSERT_EQ(refs.size(), 6u);
  for (uint32_t node = 1; node <= 3; ++node) {
    for (const ObjectRef& ref : refs) EXPECT_EQ(ReadInt(node, ref), 7);
  }
  // Updates from every node, a free, and a longer payload in a bigger object.
  for (uint32_t node = 1; node <= 3; ++node) {
    Transaction tx = txns(node).Begin();
    for (const ObjectRef& ref : refs) {
      ASSERT_OK_AND_ASSIGN(std::string bytes, tx.Read(ref));
      ASSERT_OK(tx.Write(ref, EncodeInt(*DecodeInt(bytes) + node)));
    }
    ASSERT_OK(tx.Commit());
  }
  for (const ObjectRef& ref : refs) EXPECT_EQ(ReadInt(2, ref), 7 + 1 + 2 + 3);
  {
    Transaction tx = txns(3).Begin();
    ASSERT_OK(tx.Free(refs[0]));
    ASSERT_OK_AND_ASSIGN(ObjectRef big, tx.Alloc(3000, {.near = &refs[1]}));
    EXPECT_EQ(big.address.region >> 16, refs[1].address.region >> 16);
    ASSERT_OK(tx.Write(big, std::string(2999, 'b')));
    ASSERT_OK(tx.Commit());
    Transaction check = txns(1).Begin();
    ASSERT_OK_AND_ASSIGN(std::string bytes, check.Read(big));
    EXPECT_EQ(bytes, std::string(2999, 'b'));
    EXPECT_FALSE(check.Read(refs[0]).ok()) << "a freed object is gone";
  }
  ASSERT_OK(cluster_->WaitForQuiescence());
  ASSERT_OK(cluster_->CheckReplicasIdentical());
  ASSERT_OK_AND_ASSIGN(TxnStats stats, txns(1).Stats());
  EXPECT_EQ(stats.participant.rejected, 0u);
  EXPECT_EQ(stats.participant.errors, 0u);
}

// An allocation in another node's memory takes a slot reserved there ahead of need: one ALLOC reserves a
// batch (spare_slots.h), so most new objects cost no round trip before the commit.
TEST_P(TxnTest, AllocationsOnAnotherNodeTakeSlotsReservedInBatches) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  constexpr int kObjects = 20;
  ASSERT_OK_AND_ASSIGN(TxnStats before, txns(1).Stats());
  std::vector<ObjectRef> refs;
  for (int i = 0; i < kObjects; ++i) {
    Transaction tx = txns(1).Begin(0);
    ASSERT_OK_AND_ASSIGN(ObjectRef ref, tx.Alloc(1000, {.node = 2}));
    EXPECT_EQ(ref.address.region >> 16, 2u) << "in node 2's memory";
    ASSERT_OK(tx.Write(ref, std::string(1000, static_cast<char>('a' + i % 26))));
    ASSERT_OK(tx.Commit());
    refs.push_back(ref);
  }
  {
    Transaction aborted = txns(1).Begin(0);  // its slot goes back to node 2
    ASSERT_OK(aborted.Alloc(1000, {.node = 2}).status());
    aborted.Abort();
  }
  ASSERT_OK_AND_ASSIGN(TxnStats after, txns(1).Stats());
  const uint64_t asked = after.coordinator.alloc_messages - before.coordinator.alloc_messages;
  EXPECT_GE(asked, 1u);
  EXPECT_LE(asked, (kObjects + 1 + SpareSlots::kBatch - 1) / SpareSlots::kBatch) << "one ALLOC per batch";
  for (int i = 0; i < kObjects; ++i) {
    for (int j = 0; j < i; ++j) ASSERT_FALSE(refs[i].address == refs[j].address) << "slot given twice";
    Transaction check = txns(3).Begin();
    ASSERT_OK_AND_ASSIGN(std::string bytes, check.Read(refs[i]));
    EXPECT_EQ(bytes, std::string(1000, static_cast<char>('a' + i % 26)));
  }
  ASSERT_OK(cluster_->WaitForQuiescence());
  ASSERT_OK(cluster_->CheckReplicasIdentical());
  // Node 2 keeps reserved only what node 1 still holds spare: less than a batch.
  ASSERT_OK_AND_ASSIGN(TxnStats two, txns(2).Stats());
  EXPECT_LT(two.reserved_slots, SpareSlots::kBatch);
  EXPECT_EQ(two.participant.rejected, 0u);
}

TEST_P(TxnTest, AConflictingWriteAbortsAtLock) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  std::vector<ObjectRef> x = CreateCounters(1, 0);
  ASSERT_EQ(x.size(), 1u);
  Transaction t1 = txns(2).Begin();
  Transaction t2 = txns(3).Begin();
  ASSERT_OK(t1.Read(x[0]).status());
  ASSERT_OK(t2.Read(x[0]).status());
  ASSERT_OK(t1.Write(x[0], EncodeInt(1)));
  ASSERT_OK(t2.Write(x[0], EncodeInt(2)));
  ASSERT_OK(t1.Commit());
  absl::Status second = t2.Commit();
  EXPECT_TRUE(absl::IsAborted(second)) << second;
  EXPECT_EQ(ReadInt(1, x[0]), 1);
}

// An object read twice in one transaction is read once: the second read returns the first one's snapshot
// (an update reads a bucket and its value to find a key, then again to change it), even if the object
// changed in between, and the commit still finds the change.
TEST_P(TxnTest, ASecondReadSeesTheFirstSnapshotAndTheCommitTheChange) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  std::vector<ObjectRef> x = CreateCounters(1, 5);  // on node 1
  ASSERT_EQ(x.size(), 1u);
  ASSERT_OK_AND_ASSIGN(TxnStats before, txns(2).Stats());
  Transaction t1 = txns(2).Begin();
  ASSERT_OK_AND_ASSIGN(std::string first, t1.Read(x[0]));
  EXPECT_EQ(*DecodeInt(first), 5);
  {
    Transaction t2 = txns(3).Begin();
    ASSERT_OK(t2.Write(x[0], EncodeInt(6)));
    ASSERT_OK(t2.Commit());
  }
  ASSERT_OK_AND_ASSIGN(std::string second, t1.Read(x[0]));
  EXPECT_EQ(second, first) << "the same snapshot";
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> many, t1.ReadMany({x[0], x[0]}));
  EXPECT_EQ(many, (std::vector<std::string>{first, first}));
  ASSERT_OK_AND_ASSIGN(TxnStats after, txns(2).Stats());
  EXPECT_EQ(after.coordinator.execution_reads - before.coordinator.execution_reads, 1u) << "one round trip";
  EXPECT_EQ(after.coordinator.repeated_reads - before.coordinator.repeated_reads, 3u);
  ASSERT_OK(t1.Write(x[0], EncodeInt(*DecodeInt(second) + 10)));
  absl::Status commit = t1.Commit();
  EXPECT_TRUE(absl::IsAborted(commit)) << commit;
  EXPECT_EQ(ReadInt(1, x[0]), 6) << "the write that read a stale snapshot did not commit";
}

// A transaction that read an object another commit has freed since, and is then given that very slot
// by an allocation, learns that its read is stale there (its later reads of the object come from the read
// set and could not tell it): Aborted, never "two references to one slot".
TEST_P(TxnTest, AnAllocationOfASlotReadBeforeUnderAnotherIncarnationAborts) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  int reused = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    Transaction t1 = txns(1).Begin(0);
    ASSERT_OK_AND_ASSIGN(ObjectRef x, t1.Alloc(8, {.node = 1}));
    ASSERT_OK(t1.Write(x, EncodeInt(attempt)));
    ASSERT_OK(t1.Commit());
    Transaction reader = txns(1).Begin(0);
    ASSERT_OK(reader.Read(x).status());
    {
      Transaction freer = txns(2).Begin();
      ASSERT_OK(freer.Free(x));
      ASSERT_OK(freer.Commit());
    }
    ASSERT_OK(cluster_->WaitForQuiescence());
    absl::StatusOr<ObjectRef> again = reader.Alloc(8, {.node = 1});
    if (again.ok()) {
      EXPECT_FALSE(again->address == x.address) << "a slot this transaction read, given without a word";
      reader.Abort();
      continue;
    }
    EXPECT_TRUE(absl::IsAborted(again.status())) << again.status();
    ++reused;
    reader.Abort();
  }
  EXPECT_GT(reused, 0) << "the allocator never handed back the freed slot: the test proves nothing";
  ASSERT_OK(cluster_->WaitForQuiescence());
  ASSERT_OK(cluster_->CheckReplicasIdentical());
}

// Write skew: T1 and T2 both read x and y (x + y = 2) and each zeroes a different one if the sum allows.
// Serializability lets only one of them commit; validation of the object each read but did not write
// catches the other.
TEST_P(TxnTest, WriteSkewIsPrevented) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  std::vector<ObjectRef> xy = CreateCounters(2, 1);
  ASSERT_EQ(xy.size(), 2u);
  Transaction t1 = txns(1).Begin();
  Transaction t2 = txns(2).Begin();
  for (Transaction* t : {&t1, &t2}) {
    ASSERT_OK(t->Read(xy[0]).status());
    ASSERT_OK(t->Read(xy[1]).status());
  }
  ASSERT_OK(t1.Write(xy[0], EncodeInt(0)));
  ASSERT_OK(t2.Write(xy[1], EncodeInt(0)));
  ASSERT_OK(t1.Commit());
  absl::Status second = t2.Commit();
  EXPECT_TRUE(absl::IsAborted(second)) << second;
  EXPECT_EQ(ReadInt(3, xy[0]) + ReadInt(3, xy[1]), 1);
}

TEST_P(TxnTest, ConcurrentIncrementsCountExactly) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  std::vector<ObjectRef> counter = CreateCounters(1, 0);
  ASSERT_EQ(counter.size(), 1u);
  constexpr int kPerClient = 40;
  std::vector<std::thread> clients;
  std::atomic<int> failures{0};
  for (uint32_t node = 1; node <= 3; ++node) {
    for (int c = 0; c < 2; ++c) {
      clients.emplace_back([&, node, c] {
        RetryOptions retry;
        retry.seed = seed_ * 31 + node * 7 + c;
        retry.max_attempts = 1000;
        for (int i = 0; i < kPerClient; ++i) {
          absl::Status s = RunTransaction(txns(node), [&](Transaction& tx) -> absl::Status {
            auto bytes = tx.Read(counter[0]);
            if (!bytes.ok()) return bytes.status();
            return tx.Write(counter[0], EncodeInt(*DecodeInt(*bytes) + 1));
          }, retry);
          if (!s.ok()) {
            ++failures;
            ADD_FAILURE() << s;
          }
        }
      });
    }
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(ReadInt(1, counter[0]), 6 * kPerClient);
  ASSERT_OK(cluster_->WaitForQuiescence());
  ASSERT_OK(cluster_->CheckReplicasIdentical());
}

TEST_P(TxnTest, BadInputIsRefused) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  std::vector<ObjectRef> refs = CreateCounters(1, 0);
  ASSERT_EQ(refs.size(), 1u);
  Transaction tx = txns(1).Begin();
  EXPECT_TRUE(absl::IsInvalidArgument(tx.Write(refs[0], std::string(refs[0].payload_capacity() + 1, 'x'))));
  ObjectRef bad = refs[0];
  bad.capacity = 100;
  EXPECT_TRUE(absl::IsInvalidArgument(tx.Read(bad).status()));
  ObjectRef stale = refs[0];
  stale.incarnation += 1;
  EXPECT_FALSE(tx.Read(stale).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(tx.Alloc(0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(tx.Alloc(2 << 20).status()));
  ObjectRef nowhere = refs[0];
  nowhere.address.region = (9u << 16) | 1;  // no node 9
  EXPECT_FALSE(tx.Read(nowhere).ok());
  ASSERT_OK(tx.Commit());
  EXPECT_TRUE(absl::IsFailedPrecondition(tx.Commit()));
  EXPECT_TRUE(absl::IsFailedPrecondition(tx.Write(refs[0], "x")));
  // A write to a stale reference aborts at LOCK and leaves nothing locked.
  Transaction late = txns(2).Begin();
  ASSERT_OK(late.Write(stale, EncodeInt(5)));
  EXPECT_TRUE(absl::IsAborted(late.Commit()));
  EXPECT_EQ(ReadInt(3, refs[0]), 0);
}

// A backup that dies: transactions whose records must reach it fail with Unavailable and leave nothing
// locked; transactions whose replicas are all alive go on committing.
TEST(TxnFailureTest, ADeadBackupFailsOnlyTheCommitsThatNeedIt) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  ASSERT_OK_AND_ASSIGN(auto cluster, TxnCluster::Start(ClusterOptions(Fabric::kSim, seed)));
  // Objects on node 1 (backup: node 2) and node 2 (backup: node 3).
  ObjectRef on_1, on_2;
  {
    Transaction tx = cluster->service(1).Begin();
    ASSERT_OK_AND_ASSIGN(on_1, tx.Alloc(8, {.node = 1}));
    ASSERT_OK_AND_ASSIGN(on_2, tx.Alloc(8, {.node = 2}));
    ASSERT_OK(tx.Write(on_1, EncodeInt(1)));
    ASSERT_OK(tx.Write(on_2, EncodeInt(2)));
    ASSERT_OK(tx.Commit());
  }
  // Commit returned at the first primary's acknowledgement: node 2 may still hold on_2's lock until its
  // COMMIT-PRIMARY is processed. Wait until it is, or the write below could abort at LOCK instead.
  ASSERT_OK(cluster->WaitForQuiescence());
  cluster->cluster().sim()->Crash(3);
  {
    Transaction tx = cluster->service(1).Begin();
    ASSERT_OK(tx.Write(on_2, EncodeInt(20)));
    absl::Status s = tx.Commit();
    EXPECT_TRUE(absl::IsUnavailable(s)) << s;
    EXPECT_FALSE(MayHaveCommitted(s)) << "aborted by its live coordinator: running it again is safe";
  }
  {
    Transaction tx = cluster->service(1).Begin();
    ASSERT_OK(tx.Write(on_1, EncodeInt(10)));
    ASSERT_OK(tx.Commit());
  }
  // on_2 was unlocked by the ABORT and still holds its old value.
  Transaction tx = cluster->service(2).Begin();
  ASSERT_OK_AND_ASSIGN(std::string two, tx.Read(on_2));
  ASSERT_OK_AND_ASSIGN(std::string one, tx.Read(on_1));
  EXPECT_EQ(*DecodeInt(two), 2);
  EXPECT_EQ(*DecodeInt(one), 10);
  ASSERT_OK(tx.Commit());
}

// A simulated cluster whose nodes' lease_lapsed says what `lapsed` holds; a commit that reaches step
// `lapse_at` (if given) sets it.
absl::StatusOr<std::unique_ptr<TxnCluster>> StartWithLease(uint64_t seed, std::shared_ptr<std::atomic<bool>> lapsed,
                                                           std::string lapse_at = "") {
  TxnOptions txn;
  txn.lease_lapsed = [lapsed] { return lapsed->load(); };
  if (!lapse_at.empty()) {
    txn.on_step = [lapsed, lapse_at](std::string_view step) {
      if (step == lapse_at) lapsed->store(true);
    };
  }
  return TxnCluster::Start(ClusterOptions(Fabric::kSim, seed), txn);
}

// A coordinator whose lease lapsed does not report its commits as committed: the members may have
// drained it already, and recovery decides; its reads may be of regions that moved.
TEST(TxnLeaseTest, ACommitAfterTheLeaseLapsedIsReportedUnknown) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto lapsed = std::make_shared<std::atomic<bool>>(false);
  ASSERT_OK_AND_ASSIGN(auto cluster, StartWithLease(seed, lapsed));
  ObjectRef ref;
  {
    Transaction tx = cluster->service(1).Begin();
    ASSERT_OK_AND_ASSIGN(ref, tx.Alloc(8, {.node = 2}));
    ASSERT_OK(tx.Write(ref, EncodeInt(1)));
    ASSERT_OK(tx.Commit());
  }
  ASSERT_OK(cluster->WaitForQuiescence());  // node 2 has installed it (the commit returned before)
  lapsed->store(true);
  Transaction write = cluster->service(1).Begin();
  ASSERT_OK(write.Write(ref, EncodeInt(2)));
  absl::Status s = write.Commit();
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_NE(std::string(s.message()).find("lease lapsed"), std::string::npos) << s;
  EXPECT_FALSE(MayHaveCommitted(s)) << "no record went out: it never commits";
  Transaction read = cluster->service(1).Begin();
  ASSERT_OK(read.Read(ref).status());
  absl::Status read_only = read.Commit();
  EXPECT_TRUE(absl::IsUnavailable(read_only)) << read_only;
  EXPECT_FALSE(MayHaveCommitted(read_only)) << "a read-only transaction writes nothing";
  lapsed->store(false);  // renewed
  Transaction again = cluster->service(1).Begin();
  ASSERT_OK(again.Write(ref, EncodeInt(3)));
  EXPECT_OK(again.Commit());
  Transaction check = cluster->service(2).Begin();
  ASSERT_OK_AND_ASSIGN(std::string value, check.Read(ref));
  EXPECT_EQ(*DecodeInt(value), 3);
  ASSERT_OK(check.Commit());
}

// A lease that lapses once every backup holds its record: the caller hears "may have committed", and
// COMMIT-PRIMARY goes out only once the lease runs again, so the write is installed then and not before.
TEST(TxnLeaseTest, ACommitWhoseLeaseLapsedAfterCommitBackupFinishesOnceRenewed) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  auto lapsed = std::make_shared<std::atomic<bool>>(false);
  ASSERT_OK_AND_ASSIGN(auto cluster, StartWithLease(seed, lapsed, "commit_primary"));
  ObjectRef ref;
  {
    Transaction tx = cluster->service(1).Begin();
    ASSERT_OK_AND_ASSIGN(ref, tx.Alloc(8, {.node = 2}));
    ASSERT_OK(tx.Write(ref, EncodeInt(1)));
    EXPECT_TRUE(MayHaveCommitted(tx.Commit()));
  }
  // The primary has nothing: the object stays locked (by LOCK) and unallocated until the lease is back.
  {
    Transaction read = cluster->service(2).Begin();
    EXPECT_FALSE(read.Read(ref).ok());
  }
  lapsed->store(false);
  ASSERT_OK(cluster->WaitForQuiescence());
  Transaction read = cluster->service(2).Begin();
  ASSERT_OK_AND_ASSIGN(std::string value, read.Read(ref));
  EXPECT_EQ(*DecodeInt(value), 1);
}

INSTANTIATE_TEST_SUITE_P(Fabrics, TxnTest, ::testing::Values(Fabric::kShm, Fabric::kSim),
                         [](const auto& info) { return testing::TestFabricName(info.param); });

}  // namespace
}  // namespace fathom::txn
