// The owner's object API, and local readers racing local writers.
#include "platform/object/object_store.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/object/testing/object_pattern.h"

namespace fathom::object {
namespace {

class ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fabric = network_.AddNode(1);
    ASSERT_TRUE(fabric.ok());
    fabric_ = std::move(*fabric);
    auto region = memory::LocalRegion::Allocate(*fabric_, 1, 1, 16 << 20);
    ASSERT_TRUE(region.ok());
    region_ = std::move(*region);
    source_ = std::make_unique<memory::SlabSource>(std::vector<memory::LocalRegion*>{region_.get()});
  }
  fabric::sim::SimNetwork network_;
  std::unique_ptr<fabric::Fabric> fabric_;
  std::unique_ptr<memory::LocalRegion> region_;
  std::unique_ptr<memory::SlabSource> source_;
};

std::span<const std::byte> Bytes(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

TEST_F(ObjectStoreTest, AllocateWriteReadFree) {
  memory::SlabAllocator allocator(source_.get());
  ObjectStore store({region_.get()}, &allocator);
  auto ref = store.Allocate(100);
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ(ref->capacity, 192u);  // 100 payload + 32 header bytes: the 192-byte class
  std::vector<std::byte> buffer;
  auto empty = store.Read(*ref, buffer);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  ASSERT_TRUE(store.Write(*ref, Bytes("hello, fathom")).ok());
  auto read = store.Read(*ref, buffer);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(read->data()), read->size()), "hello, fathom");
  EXPECT_EQ(store.Write(*ref, Bytes(std::string(ref->payload_capacity() + 1, 'x'))).code(),
            absl::StatusCode::kOutOfRange);
  ASSERT_TRUE(store.Free(*ref).ok());
  EXPECT_EQ(store.Read(*ref, buffer).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Write(*ref, Bytes("x")).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Free(*ref).code(), absl::StatusCode::kNotFound);  // double free
}

TEST_F(ObjectStoreTest, ReusedSlotHasNewIncarnationAndOldReferencesStayDead) {
  memory::SlabAllocator allocator(source_.get());
  ObjectStore store({region_.get()}, &allocator);
  auto first = store.Allocate(40);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(store.Free(*first).ok());
  auto second = store.Allocate(40);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->address, first->address);
  EXPECT_EQ(second->incarnation, first->incarnation + 1);
  std::vector<std::byte> buffer;
  EXPECT_TRUE(store.Read(*second, buffer).ok());
  EXPECT_EQ(store.Read(*first, buffer).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Write(*first, Bytes("stale")).code(), absl::StatusCode::kNotFound);
}

TEST_F(ObjectStoreTest, BadReferencesAreRefused) {
  memory::SlabAllocator allocator(source_.get());
  ObjectStore store({region_.get()}, &allocator);
  std::vector<std::byte> buffer;
  EXPECT_EQ(store.Read(ObjectRef{{9, 0}, 0, 64}, buffer).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Read(ObjectRef{{1, 16 << 20}, 0, 64}, buffer).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(store.Read(ObjectRef{{1, 8}, 0, 64}, buffer).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(store.Read(ObjectRef{{1, 0}, 0, 20}, buffer).status().code(), absl::StatusCode::kOutOfRange);
}

// Writers and readers on different threads of the owner: readers never accept a torn object.
TEST_F(ObjectStoreTest, RacingLocalReadersNeverAcceptATornObject) {
  memory::SlabAllocator setup_allocator(source_.get());
  ObjectStore setup({region_.get()}, &setup_allocator);
  constexpr int kObjects = 8;
  std::vector<ObjectRef> refs;
  for (int i = 0; i < kObjects; ++i) {
    auto ref = setup.Allocate(i % 2 == 0 ? 200 : 4000);
    ASSERT_TRUE(ref.ok());
    std::vector<std::byte> payload;
    testing::FillPattern(i, 0, ref->payload_capacity(), payload);
    ASSERT_TRUE(setup.Write(*ref, payload).ok());
    refs.push_back(*ref);
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> accepted{0}, bad{0}, retries{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      memory::SlabAllocator allocator(source_.get());
      ObjectStore store({region_.get()}, &allocator);
      std::vector<std::byte> payload;
      // Each writer owns half the objects: lock contention between writers is not what this tests.
      for (uint64_t generation = 1; !stop.load(); ++generation) {
        int i = (2 * generation + w) % kObjects;
        testing::FillPattern(i, generation, refs[i].payload_capacity(), payload);
        if (!store.Write(refs[i], payload).ok()) ++bad;
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      memory::SlabAllocator allocator(source_.get());
      ObjectStore store({region_.get()}, &allocator);
      std::vector<std::byte> buffer;
      ReadStats stats;
      for (int n = 0; n < 20000; ++n) {
        int i = (n * 7 + r) % kObjects;
        auto payload = store.Read(refs[i], buffer, &stats);
        if (!payload.ok() || !testing::MatchesPattern(i, refs[i].payload_capacity(), *payload)) {
          ++bad;
          continue;
        }
        ++accepted;
      }
      retries += stats.torn_retries + stats.locked_retries;
    });
  }
  for (size_t i = 2; i < threads.size(); ++i) threads[i].join();
  stop = true;
  threads[0].join();
  threads[1].join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(accepted.load(), 40000u);
  std::cerr << "[ info ] local racing reads: " << accepted << " accepted, " << retries
            << " torn or locked copies retried\n";
}

}  // namespace
}  // namespace fathom::object
