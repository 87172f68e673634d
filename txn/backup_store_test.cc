// BackupStore: copies made on first use, once per region (also when two threads ask at once), and the
// written end a promotion bounds its walk of the copy by.
#include "txn/backup_store.h"

#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/memory/region.h"

namespace fathom::txn {
namespace {

constexpr uint64_t kRegionBytes = 1 << 20;

WriteEntry At(uint32_t region, uint32_t offset, uint32_t capacity, uint64_t version) {
  WriteEntry entry;
  entry.ref.address = memory::GlobalAddress{region, offset};
  entry.ref.capacity = capacity;
  entry.version = version;
  entry.payload = "payload";
  return entry;
}

TEST(BackupStoreTest, WrittenEndIsTheEndOfTheHighestSlotApplied) {
  BackupStore store;
  EXPECT_EQ(store.WrittenEnd(7), 0u);  // no copy
  ASSERT_OK_AND_ASSIGN(bool changed, store.Apply(At(7, 4096, 128, 2), kRegionBytes));
  EXPECT_TRUE(changed);
  EXPECT_EQ(store.WrittenEnd(7), 4096u + 128);
  ASSERT_OK(store.Apply(At(7, 64, 64, 2), kRegionBytes).status());  // lower: the end stays
  EXPECT_EQ(store.WrittenEnd(7), 4096u + 128);
  ASSERT_OK(store.Apply(At(7, 8192, 256, 2), kRegionBytes).status());
  EXPECT_EQ(store.WrittenEnd(7), 8192u + 256);
  EXPECT_EQ(store.WrittenEnd(8), 0u);  // another region
}

TEST(BackupStoreTest, AStaleApplyDoesNotMoveTheWrittenEnd) {
  BackupStore store;
  ASSERT_OK(store.Apply(At(7, 4096, 128, 5), kRegionBytes).status());
  ASSERT_OK(store.Apply(At(7, 4096, 128, 9), kRegionBytes).status());
  ASSERT_OK_AND_ASSIGN(bool changed, store.Apply(At(7, 4096, 128, 3), kRegionBytes));
  EXPECT_FALSE(changed);
  EXPECT_EQ(store.WrittenEnd(7), 4096u + 128);
}

TEST(BackupStoreTest, ThreadsAskingForTheSameCopyAtOnceGetOne) {
  fabric::sim::SimNetwork network;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fabric::Fabric> fabric, network.AddNode(1));
  BackupStore store;
  int made = 0;  // under owned_mu
  std::vector<memory::LocalRegion*> given(4, nullptr);
  std::vector<std::unique_ptr<memory::LocalRegion>> owned;
  std::mutex owned_mu;
  store.set_allocator([&](uint32_t region, uint64_t bytes) -> absl::StatusOr<memory::LocalRegion*> {
    std::lock_guard<std::mutex> lock(owned_mu);
    ++made;
    absl::StatusOr<std::unique_ptr<memory::LocalRegion>> copy = memory::LocalRegion::Allocate(*fabric, region, 1, bytes);
    if (!copy.ok()) return copy.status();
    owned.push_back(std::move(*copy));
    return owned.back().get();
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      absl::StatusOr<memory::LocalRegion*> copy = store.Registered(7, kRegionBytes);
      if (copy.ok()) given[i] = *copy;
    });
  }
  for (std::thread& t : threads) t.join();
  std::lock_guard<std::mutex> lock(owned_mu);
  EXPECT_EQ(made, 1);
  for (memory::LocalRegion* copy : given) EXPECT_EQ(copy, given[0]);
  EXPECT_NE(given[0], nullptr);
}

TEST(BackupStoreTest, ACopyOfAnotherSizeIsRefused) {
  BackupStore store;
  ASSERT_OK(store.Apply(At(7, 0, 64, 1), kRegionBytes).status());
  EXPECT_TRUE(absl::IsFailedPrecondition(store.Apply(At(7, 0, 64, 2), kRegionBytes * 2).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(store.Apply(At(9, 0, 64, 1), 100).status()));  // not a multiple of 64
}

}  // namespace
}  // namespace fathom::txn
