// The participant's log keys: a transaction is named by its whole id, configuration epoch included. A
// coordinator's counters restart with its process (which then runs in a later configuration), so a
// record of the new process must never act on a transaction of the old one that shares its counter.
#include "txn/participant.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/memory/region.h"
#include "platform/memory/slab_allocator.h"
#include "platform/object/object_store.h"
#include "txn/log_epochs.h"

namespace fathom::txn {
namespace {

constexpr uint32_t kRegion = (uint32_t{1} << 16) | 1;  // node 1's first region
constexpr uint64_t kRegionBytes = 4 << 20;

class ParticipantTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(fabric_, network_.AddNode(1));
    ASSERT_OK_AND_ASSIGN(region_, memory::LocalRegion::Allocate(*fabric_, kRegion, 1, kRegionBytes));
    source_ = std::make_unique<memory::SlabSource>(std::vector<memory::LocalRegion*>{region_.get()});
    allocator_ = std::make_unique<memory::SlabAllocator>(source_.get());
    store_ = std::make_unique<object::ObjectStore>(std::vector<memory::LocalRegion*>{region_.get()}, allocator_.get());
    participant_ = std::make_unique<Participant>(store_.get(), allocator_.get(), &backups_,
                                                 [](uint32_t region) { return region == kRegion ? kRegionBytes : 0; });
  }

  // A LOCK (or COMMIT-BACKUP) record of transaction `id` writing `value` into `ref`.
  static Record WriteRecord(RecordKind kind, const TxnId& id, const object::ObjectRef& ref, std::string value,
                            uint64_t version) {
    Record record;
    record.kind = kind;
    record.id = id;
    WriteEntry entry;
    entry.ref = ref;
    entry.op = WriteOp::kWrite;
    entry.version = version;
    entry.payload = std::move(value);
    record.entries.push_back(std::move(entry));
    record.written_regions = RegionsOf(record.entries);
    return record;
  }

  bool Locked(const object::ObjectRef& ref) {
    auto object = store_->Resolve(ref);
    EXPECT_TRUE(object.ok()) << object.status();
    return object.ok() && object->ReadHeader().locked();
  }

  fabric::sim::SimNetwork network_;
  std::unique_ptr<fabric::Fabric> fabric_;
  std::unique_ptr<memory::LocalRegion> region_;
  std::unique_ptr<memory::SlabSource> source_;
  std::unique_ptr<memory::SlabAllocator> allocator_;
  std::unique_ptr<object::ObjectStore> store_;
  BackupStore backups_;
  std::unique_ptr<Participant> participant_;
};

TEST_F(ParticipantTest, AnAbortOfALaterConfigurationLeavesAnEarlierTransactionsLocks) {
  ASSERT_OK_AND_ASSIGN(object::ObjectRef ref, store_->Allocate(16));
  const TxnId before_restart{/*epoch=*/3, /*node=*/2, /*thread=*/0, /*counter=*/1};
  const TxnId after_restart{/*epoch=*/5, /*node=*/2, /*thread=*/0, /*counter=*/1};
  ASSERT_OK(participant_->Lock(WriteRecord(RecordKind::kLock, before_restart, ref, "old", 0)).status());
  ASSERT_TRUE(Locked(ref));

  participant_->Abort(after_restart);
  EXPECT_TRUE(Locked(ref)) << "an ABORT of " << after_restart.ToString() << " unlocked "
                           << before_restart.ToString();
  // The restarted coordinator may lock the same counter again elsewhere; it is another transaction.
  ASSERT_OK_AND_ASSIGN(object::ObjectRef other, store_->Allocate(16));
  EXPECT_OK(participant_->Lock(WriteRecord(RecordKind::kLock, after_restart, other, "new", 0)).status());
  EXPECT_TRUE(absl::IsInvalidArgument(participant_->CommitPrimary(TxnId{4, 2, 0, 1})));

  participant_->Abort(before_restart);
  EXPECT_FALSE(Locked(ref));
  EXPECT_TRUE(Locked(other));
}

// Issue 58, path 5: a participant removed while it held a LOCK (its coordinator's ABORT lost with the
// connection, and never sent again to a node that left) joins again with its memory. Unless it lets go,
// the lock stays and its log epoch never drains: with SSD logs every write in the cluster was refused
// ("log epoch closing") for good (tests/faults netns_data_dir_ycsb_b_partition, seen in CI).
TEST_F(ParticipantTest, ARemovalLetsGoOfLocksEpochsAndRecords) {
  LogEpochs epochs(/*first_epoch=*/7);
  participant_->set_log_epochs(&epochs);
  ASSERT_OK_AND_ASSIGN(object::ObjectRef locked, store_->Allocate(16));
  ASSERT_OK_AND_ASSIGN(object::ObjectRef backed, store_->Allocate(16));
  ASSERT_OK(participant_->Lock(WriteRecord(RecordKind::kLock, TxnId{5, 65535, 0, 1}, locked, "x", 0)).status());
  ASSERT_OK(participant_->CommitBackup(WriteRecord(RecordKind::kCommitBackup, TxnId{5, 65535, 0, 2}, backed, "y", 1)));
  ASSERT_TRUE(Locked(locked));
  epochs.Close();
  ASSERT_FALSE(epochs.Drained()) << "the lock holds its epoch";

  EXPECT_EQ(participant_->ForgetAfterRemoval(), 2u);
  EXPECT_FALSE(Locked(locked));
  EXPECT_TRUE(epochs.Drained()) << "a lock of a transaction decided without this node kept its epoch open";
  EXPECT_TRUE(epochs.HoldsNoLock());
  EXPECT_EQ(participant_->log_entries(), 0u);
  EXPECT_EQ(participant_->BackupRecordsFor(kRegion), 0u) << "a promotion here would wait for it for good";
  EXPECT_TRUE(backups_.View(kRegion).empty()) << "a forgotten backup record was applied";
}

TEST_F(ParticipantTest, ATruncationAppliesOnlyItsOwnConfigurationsRecords) {
  ASSERT_OK_AND_ASSIGN(object::ObjectRef ref, store_->Allocate(16));
  const TxnId committed{/*epoch=*/3, /*node=*/2, /*thread=*/1, /*counter=*/7};
  ASSERT_OK(participant_->CommitBackup(WriteRecord(RecordKind::kCommitBackup, committed, ref, "kept", 1)));
  const uint64_t counter = 7;
  participant_->Truncate(/*epoch=*/4, 2, 1, {&counter, 1});
  EXPECT_EQ(participant_->log_entries(), 1u) << "a truncation of epoch 4 forgot a record of epoch 3";
  EXPECT_TRUE(backups_.View(kRegion).empty()) << "applied before its truncation";

  participant_->Truncate(/*epoch=*/3, 2, 1, {&counter, 1});
  EXPECT_EQ(participant_->log_entries(), 0u);
  EXPECT_EQ(participant_->stats().backup_objects_applied, 1u);
}

// Transaction recovery's side of the participant: what it holds of a gone coordinator's transactions, and
// decisions that stay taken until forgotten.
TEST_F(ParticipantTest, RecoveryDecisionsAreKeptUntilForgotten) {
  ASSERT_OK_AND_ASSIGN(object::ObjectRef locked, store_->Allocate(16));
  ASSERT_OK_AND_ASSIGN(object::ObjectRef backed, store_->Allocate(16));
  const TxnId commit{3, 2, 0, 1};
  const TxnId abort{3, 2, 0, 2};
  const TxnId alive{3, 4, 0, 1};  // another coordinator's: never reported
  ASSERT_OK(participant_->Lock(WriteRecord(RecordKind::kLock, commit, locked, "c", 0)).status());
  ASSERT_OK(participant_->CommitBackup(WriteRecord(RecordKind::kCommitBackup, abort, backed, "a", 1)));
  ASSERT_OK(participant_->Lock(WriteRecord(RecordKind::kLock, alive, backed, "x", 0)).status());
  auto gone = [](const TxnId& id) { return id.node == 2; };
  std::vector<Hold> held = participant_->HeldFor(gone, 10);
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(participant_->HeldFor(gone, 1).size(), 1u);

  ASSERT_OK(participant_->Resolve(commit, /*commit=*/true));
  EXPECT_FALSE(Locked(locked));
  ASSERT_OK(participant_->Resolve(abort, /*commit=*/false));
  ASSERT_OK(participant_->Resolve(abort, /*commit=*/false));  // a second round decides the same
  for (const Hold& hold : participant_->HeldFor(gone, 10)) {
    EXPECT_EQ(hold.kind, hold.id == commit ? HoldKind::kCommitted : HoldKind::kAborted) << hold.id.ToString();
  }
  // The other decision contradicts what is held: refused, nothing changes.
  EXPECT_TRUE(absl::IsFailedPrecondition(participant_->Resolve(commit, /*commit=*/false)));
  EXPECT_TRUE(absl::IsFailedPrecondition(participant_->Resolve(abort, /*commit=*/true)));
  // Undecided here: not forgotten.
  EXPECT_TRUE(absl::IsFailedPrecondition(participant_->Forget(alive)));

  ASSERT_OK(participant_->Forget(commit));
  ASSERT_OK(participant_->Forget(abort));
  ASSERT_OK(participant_->Forget(abort));  // nothing left: fine
  EXPECT_TRUE(participant_->HeldFor(gone, 10).empty());
  EXPECT_EQ(participant_->log_entries(), 1u);  // `alive`'s lock
  EXPECT_TRUE(backups_.View(kRegion).empty()) << "the aborted backup record was applied";
}

// Truncation tombstones: a transaction truncated here before its coordinator's mark settles it is
// remembered (recovery must tell "applied and forgotten" from "never received"), until a mark of its
// incarnation settles it or recovery forgets it. Each incarnation's mark is kept and speaks for its own ids.
TEST_F(ParticipantTest, TruncationLeavesATombstoneUntilTheCoordinatorsMarkSettlesIt) {
  ASSERT_OK_AND_ASSIGN(object::ObjectRef backed, store_->Allocate(16));
  const TxnId first{4, 2, 0, 5};
  const TxnId second{4, 2, 0, 6};
  const TxnId old_process{3, 2, 0, 2};  // the coordinator's earlier process (incarnation 3)
  for (const TxnId& id : {first, second, old_process}) {
    ASSERT_OK(participant_->CommitBackup(WriteRecord(RecordKind::kCommitBackup, id, backed, "v", id.counter)));
    participant_->Truncate(id.epoch, id.node, id.thread, {&id.counter, 1});
  }
  EXPECT_EQ(participant_->log_entries(), 0u);
  EXPECT_EQ(participant_->truncation_tombstones(), 3u);
  auto gone = [](const TxnId& id) { return id.node == 2; };
  std::vector<Hold> held = participant_->HeldFor(gone, 10);
  ASSERT_EQ(held.size(), 3u);
  for (const Hold& hold : held) EXPECT_EQ(hold.kind, HoldKind::kTruncated) << hold.id.ToString();

  // A bound at 6 settles #5 of incarnation 4, not #6, nor the earlier process's #2.
  participant_->OnMark(2, 0, CoordinatorMark{4, 6});
  EXPECT_EQ(participant_->truncation_tombstones(), 2u);
  // Recovery's answers: a commit agrees with a tombstone, an abort is refused; forget drops it.
  EXPECT_OK(participant_->Resolve(old_process, /*commit=*/true));
  EXPECT_TRUE(absl::IsFailedPrecondition(participant_->Resolve(old_process, /*commit=*/false)));
  ASSERT_OK(participant_->Forget(old_process));
  EXPECT_EQ(participant_->truncation_tombstones(), 1u);
  // A mark of the earlier incarnation, heard late, speaks for its ids only: not for #6 of incarnation 4.
  participant_->OnMark(2, 0, CoordinatorMark{3, 100});
  EXPECT_EQ(participant_->truncation_tombstones(), 1u);
  participant_->OnMark(2, 0, CoordinatorMark{4, 7});
  EXPECT_EQ(participant_->truncation_tombstones(), 0u);

  // Truncated after the mark settled it: no tombstone at all.
  const TxnId settled{4, 2, 0, 3};
  ASSERT_OK(participant_->CommitBackup(WriteRecord(RecordKind::kCommitBackup, settled, backed, "w", 9)));
  participant_->Truncate(settled.epoch, settled.node, settled.thread, {&settled.counter, 1});
  EXPECT_EQ(participant_->truncation_tombstones(), 0u);
  // The marks heard, for recovery: only of coordinators that are gone.
  std::vector<ThreadMark> marks = participant_->MarksOf([](uint32_t node, uint64_t) { return node == 2; });
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0], (ThreadMark{2, 0, CoordinatorMark{3, 100}}));
  EXPECT_EQ(marks[1], (ThreadMark{2, 0, CoordinatorMark{4, 7}}));
  EXPECT_TRUE(participant_->MarksOf([](uint32_t, uint64_t) { return false; }).empty());
}

// Slots reserved ahead of need (spare_slots.h) belong to the coordinator that asked: no other node's LOCK
// may allocate them, and once that coordinator is gone they are freed, except one its held LOCK allocates.
TEST_F(ParticipantTest, ReservedSlotsBelongToTheirCoordinatorAndAreFreedWhenItIsGone) {
  ASSERT_OK_AND_ASSIGN(object::ObjectRef for_two, participant_->Reserve(100, /*coordinator=*/2, /*epoch=*/4));
  ASSERT_OK_AND_ASSIGN(object::ObjectRef locked_by_two, participant_->Reserve(100, 2, 4));
  ASSERT_OK_AND_ASSIGN(object::ObjectRef for_three, participant_->Reserve(100, 3, 5));
  EXPECT_EQ(participant_->reserved(), 3u);

  Record stolen = WriteRecord(RecordKind::kLock, TxnId{5, /*node=*/3, 0, 1}, for_two, "x", 0);
  stolen.entries[0].op = WriteOp::kAlloc;
  EXPECT_TRUE(absl::IsInvalidArgument(participant_->Lock(stolen).status()));
  EXPECT_FALSE(Locked(for_two));

  Record held = WriteRecord(RecordKind::kLock, TxnId{4, /*node=*/2, 0, 1}, locked_by_two, "y", 0);
  held.entries[0].op = WriteOp::kAlloc;
  held.entries[0].version = locked_by_two.incarnation;
  ASSERT_OK(participant_->Lock(held).status());

  size_t kept = 0;
  auto node_two_gone = [](uint32_t node, uint64_t) { return node == 2; };
  EXPECT_EQ(participant_->ReleaseReservationsOfGone(node_two_gone, &kept), 1u);
  EXPECT_EQ(kept, 1u);  // the slot its LOCK allocates waits for recovery's decision
  EXPECT_EQ(participant_->reserved(), 2u);
  EXPECT_TRUE(absl::IsInvalidArgument(participant_->Release(for_two, 2))) << "freed, so no longer reserved";
  EXPECT_TRUE(absl::IsInvalidArgument(participant_->Release(for_three, 2))) << "node 3's, not node 2's to give back";
  EXPECT_OK(participant_->Release(for_three, 3));

  participant_->Abort(held.id);  // recovery aborted it: now nothing holds the slot
  EXPECT_EQ(participant_->ReleaseReservationsOfGone(node_two_gone, &kept), 1u);
  EXPECT_EQ(kept, 0u);
  EXPECT_EQ(participant_->reserved(), 0u);
  EXPECT_EQ(participant_->stats().reservations_of_gone_freed, 2u);
  // Freed slots are allocated again.
  ASSERT_OK_AND_ASSIGN(object::ObjectRef again, participant_->Reserve(100, 3, 5));
  EXPECT_TRUE(again.address == for_two.address || again.address == locked_by_two.address ||
              again.address == for_three.address);
}

}  // namespace
}  // namespace fathom::txn
