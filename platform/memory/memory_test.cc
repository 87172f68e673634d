#include <set>
#include <thread>

#include "gtest/gtest.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/memory/global_address.h"
#include "platform/memory/region.h"
#include "platform/memory/region_table.h"
#include "platform/memory/slab_allocator.h"

namespace fathom::memory {
namespace {

TEST(GlobalAddressTest, RoundTripsAndOrders) {
  GlobalAddress a{7, 0x1000};
  EXPECT_EQ(GlobalAddress::FromRaw(a.raw()), a);
  EXPECT_EQ(a.raw(), (uint64_t{7} << 32) | 0x1000);
  EXPECT_TRUE(GlobalAddress{}.is_null());
  EXPECT_FALSE(a.is_null());
  EXPECT_LT((GlobalAddress{7, 5}), (GlobalAddress{8, 0}));
  EXPECT_EQ(a.ToString(), "r7+0x1000");
}

class MemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fabric = network_.AddNode(1);
    ASSERT_TRUE(fabric.ok());
    fabric_ = std::move(*fabric);
  }
  std::unique_ptr<LocalRegion> NewRegion(uint32_t id, uint64_t size) {
    auto region = LocalRegion::Allocate(*fabric_, id, 1, size);
    EXPECT_TRUE(region.ok()) << region.status();
    return region.ok() ? std::move(*region) : nullptr;
  }
  fabric::sim::SimNetwork network_;
  std::unique_ptr<fabric::Fabric> fabric_;
};

TEST_F(MemoryTest, RegionRejectsBadArguments) {
  EXPECT_EQ(LocalRegion::Allocate(*fabric_, kNullRegion, 1, 4096).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LocalRegion::Allocate(*fabric_, 3, 1, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LocalRegion::Allocate(*fabric_, 3, 1, kMaxRegionBytes + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto region = NewRegion(3, 1 << 20);
  ASSERT_NE(region, nullptr);
  EXPECT_EQ(region->info().descriptor.length, uint64_t{1} << 20);
  EXPECT_EQ(region->info().owner_node, 1u);
}

TEST_F(MemoryTest, RegionTableChecksRanges) {
  auto region = NewRegion(5, 8192);
  RegionTable table;
  ASSERT_TRUE(table.Add(region->info()).ok());
  EXPECT_TRUE(table.Add(region->info()).ok());  // idempotent
  RegionInfo other = region->info();
  other.owner_node = 9;
  EXPECT_EQ(table.Add(other).code(), absl::StatusCode::kAlreadyExists);
  RegionInfo lying = region->info();
  lying.id = 6;
  lying.size = 1 << 20;  // larger than its descriptor
  EXPECT_EQ(table.Add(lying).code(), absl::StatusCode::kInvalidArgument);

  EXPECT_TRUE(table.CheckRange({5, 0}, 8192).ok());
  EXPECT_TRUE(table.CheckRange({5, 8191}, 1).ok());
  EXPECT_EQ(table.CheckRange({5, 8191}, 2).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(table.CheckRange({5, 8192}, 1).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(table.CheckRange({5, 100}, 0).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(table.CheckRange({5, 1}, ~uint64_t{0}).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(table.CheckRange({6, 0}, 1).code(), absl::StatusCode::kNotFound);
  table.Remove(5);
  EXPECT_EQ(table.CheckRange({5, 0}, 1).code(), absl::StatusCode::kNotFound);
}

TEST_F(MemoryTest, EverySizeGetsTheSmallestClassHoldingIt) {
  for (uint64_t bytes = 1; bytes <= kMaxSlotBytes; ++bytes) {
    const int size_class = SizeClassFor(bytes);
    ASSERT_GE(size_class, 0) << bytes;
    ASSERT_GE(SlotBytes(size_class), bytes);
    if (size_class > 0) ASSERT_LT(SlotBytes(size_class - 1), bytes);
  }
  EXPECT_EQ(kNumSizeClasses, 74);
  EXPECT_EQ(SlotBytes(SizeClassFor(129)), 192u);
  EXPECT_EQ(SlotBytes(SizeClassFor(385)), 512u);
  EXPECT_EQ(SlotBytes(SizeClassFor(513)), 768u);
  EXPECT_EQ(SlotBytes(SizeClassFor(769)), 1024u);
  EXPECT_EQ(SlotBytes(SizeClassFor(1025)), 1152u);
  EXPECT_EQ(SlotBytes(SizeClassFor((256 << 10) + 1)), 512u << 10);
}

TEST_F(MemoryTest, SmallSlabsHoldAtLeastFourSlotsAndWasteAtMostASixteenth) {
  EXPECT_TRUE(UsesSmallSlabs(64) && UsesSmallSlabs(384) && UsesSmallSlabs(1152) && UsesSmallSlabs(4096));
  EXPECT_TRUE(UsesSmallSlabs(9216)) << "seven slots, 1 KiB left";
  EXPECT_FALSE(UsesSmallSlabs(11264)) << "five slots, 8 KiB left";
  EXPECT_TRUE(UsesSmallSlabs(16384));
  EXPECT_FALSE(UsesSmallSlabs(20480));
  for (int c = 0; c < kNumSizeClasses; ++c) {
    const uint32_t bytes = SlotBytes(c);
    if (!UsesSmallSlabs(bytes)) continue;
    EXPECT_GE(kSmallSlabBytes / bytes, 4u) << bytes;
    EXPECT_LE(kSmallSlabBytes % bytes, kSmallSlabBytes / 16) << bytes;
  }
}

TEST_F(MemoryTest, SlabAllocatorServesEveryClassWithoutOverlap) {
  auto region = NewRegion(2, 64 << 20);
  SlabSource source({region.get()});
  SlabAllocator allocator(&source);
  std::vector<Slot> slots;
  for (uint64_t bytes : {1ull, 64ull, 65ull, 200ull, 1100ull, 4096ull, 5000ull, 65536ull, 300000ull, 1ull << 20}) {
    for (int i = 0; i < 3; ++i) {
      auto slot = allocator.Allocate(bytes);
      ASSERT_TRUE(slot.ok()) << bytes << ": " << slot.status();
      EXPECT_GE(slot->capacity, bytes);
      // Fine classes from 1 KiB to 256 KiB: at most an eighth above the request; powers of two around them.
      const bool fine = bytes > 1024 && bytes <= (256u << 10);
      EXPECT_LT(slot->capacity, fine ? bytes + bytes / 8 : std::max<uint64_t>(2 * bytes, kMinSlotBytes + 1));
      EXPECT_EQ(slot->capacity % kMinSlotBytes, 0u);
      absl::StatusOr<Slab> slab = source.SlabOf(slot->address);
      ASSERT_TRUE(slab.ok()) << slab.status();
      EXPECT_EQ(slab->bytes, UsesSmallSlabs(slot->capacity) ? kSmallSlabBytes : kMaxSlotBytes);
      EXPECT_EQ((slot->address.offset - slab->base.offset) % slot->capacity, 0u)
          << "slots are aligned to their size within their slab";
      EXPECT_LE(slot->address.offset - slab->base.offset + slot->capacity, slab->bytes);
      slots.push_back(*slot);
    }
  }
  // No two slots overlap and all lie inside the region.
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.address < b.address; });
  for (size_t i = 0; i < slots.size(); ++i) {
    EXPECT_LE(uint64_t{slots[i].address.offset} + slots[i].capacity, region->size());
    if (i > 0) EXPECT_LE(uint64_t{slots[i - 1].address.offset} + slots[i - 1].capacity, slots[i].address.offset);
  }
  EXPECT_EQ(allocator.Allocate(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.Allocate(kMaxSlotBytes + 1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(MemoryTest, FreedSlotsAreReusedAndBadFreesRejected) {
  auto region = NewRegion(2, 4 << 20);
  SlabSource source({region.get()});
  SlabAllocator allocator(&source);
  auto a = allocator.Allocate(100);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(allocator.Free(a->address).ok());
  auto b = allocator.Allocate(128);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->address, a->address);
  EXPECT_EQ(allocator.Free(GlobalAddress{2, a->address.offset + 8}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.Free(GlobalAddress{2, 3 << 20}).code(), absl::StatusCode::kInvalidArgument);  // no slab
  EXPECT_EQ(allocator.Free(GlobalAddress{9, 0}).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(MemoryTest, MemoryInUseIsCountedInSlotBytesAndCarvedSlabs) {
  auto region = NewRegion(2, 4 << 20);  // four 1 MiB chunks
  SlabSource source({region.get()});
  SlabAllocator allocator(&source);
  EXPECT_EQ(source.region_bytes(), 4u << 20);
  EXPECT_EQ(source.carved_bytes(), 0u);
  auto a = allocator.Allocate(100);  // a 128-byte slot in a 64 KiB slab
  auto b = allocator.Allocate(1500);  // 1,536 bytes, from a second small slab
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(allocator.stats().allocated_bytes, 128u + 1536u);
  EXPECT_EQ(source.carved_bytes(), 2 * kSmallSlabBytes);
  EXPECT_EQ(a->address.offset, 0u);
  EXPECT_EQ(b->address.offset, kSmallSlabBytes) << "small slabs share a chunk";
  ASSERT_TRUE(allocator.Free(b->address).ok());
  EXPECT_EQ(allocator.stats().freed_bytes, 1536u);
  ASSERT_TRUE(allocator.Allocate(1530).ok());  // the freed slot again: no new slab
  EXPECT_EQ(allocator.stats().allocated_bytes, 128u + 2 * 1536u);
  EXPECT_EQ(source.carved_bytes(), 2 * kSmallSlabBytes);
  // A 20 KiB slot takes a whole chunk, not the rest of the first one.
  auto c = allocator.Allocate(20000);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->address.offset, 1u << 20);
  EXPECT_EQ(source.carved_bytes(), 2 * kSmallSlabBytes + (1 << 20));
  // The last two chunks, then a failed allocation, which counts nothing.
  ASSERT_TRUE(allocator.Allocate(1 << 20).ok());
  ASSERT_TRUE(allocator.Allocate(1 << 20).ok());
  const uint64_t before = allocator.stats().allocated_bytes;
  EXPECT_EQ(allocator.Allocate(1 << 20).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(allocator.stats().allocated_bytes, before);
  EXPECT_EQ(source.carved_bytes(), 2 * kSmallSlabBytes + (3 << 20));
  // Small slabs still fill the first chunk's 14 free units (16 slots of 4 KiB each), then nothing is left.
  for (int i = 0; i < 14 * 16; ++i) ASSERT_TRUE(allocator.Allocate(4096).ok());
  EXPECT_EQ(allocator.Allocate(4096).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(source.carved_bytes(), 4u << 20);
}

TEST_F(MemoryTest, RunningOutIsResourceExhausted) {
  auto region = NewRegion(2, 2 << 20);  // two 1 MiB slabs
  SlabSource source({region.get()});
  SlabAllocator allocator(&source);
  ASSERT_TRUE(allocator.Allocate(1 << 20).ok());
  ASSERT_TRUE(allocator.Allocate(1 << 20).ok());
  EXPECT_EQ(allocator.Allocate(1 << 20).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(allocator.Allocate(64).status().code(), absl::StatusCode::kResourceExhausted);
  auto more = NewRegion(3, 1 << 20);
  source.AddRegion(more.get());
  auto slot = allocator.Allocate(64);
  ASSERT_TRUE(slot.ok());
  EXPECT_EQ(slot->address.region, 3u);
}

// A region carved up for one size and then freed (a dropped table) serves smaller objects from its slots,
// never larger ones, and a slot freed again goes back to its own class.
TEST_F(MemoryTest, WhenMemoryIsFullFreedLargerSlotsServeSmallerObjects) {
  auto region = NewRegion(2, 2 << 20);  // two 1 MiB slabs
  SlabSource source({region.get()});
  SlabAllocator allocator(&source);
  std::vector<Slot> big;
  while (true) {
    absl::StatusOr<Slot> slot = allocator.Allocate(2048);
    if (!slot.ok()) {
      ASSERT_EQ(slot.status().code(), absl::StatusCode::kResourceExhausted);
      break;
    }
    big.push_back(*slot);
  }
  ASSERT_EQ(big.size(), 1024u);  // both slabs, 2 KiB slots
  for (const Slot& slot : big) ASSERT_TRUE(allocator.Free(slot.address).ok());
  absl::StatusOr<Slot> small = allocator.Allocate(1100);  // its own class (1,152) has no slab left
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->capacity, 2048u) << "a freed 2 KiB slot, whole";
  EXPECT_EQ(allocator.stats().larger_slots, 1u);
  EXPECT_EQ(allocator.Allocate(4096).status().code(), absl::StatusCode::kResourceExhausted)
      << "larger objects find no room in smaller slots";
  ASSERT_TRUE(allocator.Free(small->address).ok());
  absl::StatusOr<Slot> again = allocator.Allocate(2048);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->address, small->address) << "freed to the 2 KiB class it belongs to";
  EXPECT_EQ(source.carved_bytes(), 2u << 20);
}

TEST_F(MemoryTest, ClaimedSlabsAreNeverAllocatedAndTheirSlotsCanBeFreed) {
  auto region = NewRegion(2, 2 << 20);  // two 1 MiB chunks
  SlabSource source({region.get()});
  SlabAllocator restorer(&source);
  // A restart rebuilt two 128-byte objects in small slab 0, a 64-byte one in small slab 2 and a 20 KiB one
  // in chunk 1.
  ASSERT_TRUE(restorer.Claim(GlobalAddress{2, 256}, 128).ok());
  ASSERT_TRUE(restorer.Claim(GlobalAddress{2, 384}, 128).ok());  // same slab, same class: fine
  ASSERT_TRUE(restorer.Claim(GlobalAddress{2, 2 * kSmallSlabBytes + 64}, 64).ok());
  ASSERT_TRUE(restorer.Claim(GlobalAddress{2, (1 << 20) + 20480}, 20480).ok());
  ASSERT_TRUE(restorer.Claim(GlobalAddress{2, (1 << 20) + 20480}, 20480).ok()) << "idempotent";
  EXPECT_EQ(restorer.Claim(GlobalAddress{2, 512}, 64).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(restorer.Claim(GlobalAddress{2, (1 << 20) + 3 * kSmallSlabBytes}, 64).code(),
            absl::StatusCode::kFailedPrecondition)
      << "inside a chunk-wide slab of another class";
  EXPECT_EQ(restorer.Claim(GlobalAddress{2, 100}, 128).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(restorer.Claim(GlobalAddress{2, 0}, 100).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(restorer.Claim(GlobalAddress{2, (2 << 20) - 64}, 128).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(restorer.Claim(GlobalAddress{2, 910 * 1152}, 1152).code(), absl::StatusCode::kInvalidArgument)
      << "on the chunk's grid but past its end";
  EXPECT_EQ(restorer.Claim(GlobalAddress{9, 0}, 64).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(restorer.Claim(GlobalAddress{2, 2 << 20}, 64).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(source.carved_bytes(), 2 * kSmallSlabBytes + (1 << 20));
  // Allocation takes only the unclaimed units of chunk 0; no chunk is left for a large slot.
  SlabAllocator allocator(&source);
  auto a = allocator.Allocate(64);
  auto b = allocator.Allocate(1000);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->address.offset, 1 * kSmallSlabBytes);
  EXPECT_EQ(b->address.offset, 3 * kSmallSlabBytes);
  EXPECT_EQ(allocator.Allocate(20000).status().code(), absl::StatusCode::kResourceExhausted);
  // A slab given to an allocator cannot be claimed; a claimed slot can be freed and then reused.
  EXPECT_EQ(restorer.Claim(GlobalAddress{2, kSmallSlabBytes}, 64).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(restorer.Free(GlobalAddress{2, 256}).ok());
  auto reused = restorer.Allocate(100);
  ASSERT_TRUE(reused.ok());
  EXPECT_EQ(reused->address, (GlobalAddress{2, 256}));
  ASSERT_TRUE(restorer.Free(GlobalAddress{2, (1 << 20) + 20480}).ok());
  EXPECT_EQ(restorer.Free(GlobalAddress{2, (1 << 20) + 20480 + 64}).code(), absl::StatusCode::kInvalidArgument);
}

// Builds before small slabs laid every class's slots over a whole 1 MiB slab: a slot restored from their
// SSD log (or found in a promoted copy) that lies off the small-slab grid makes its chunk one slab of its
// class again, so the restart loses nothing and no slot is handed out twice.
TEST_F(MemoryTest, SlotsOfTheOldWholeChunkLayoutAreClaimedWithTheirChunk) {
  auto region = NewRegion(2, 2 << 20);
  SlabSource source({region.get()});
  SlabAllocator restorer(&source);
  // 1,152-byte slots at chunk offsets k * 1152: slot 0 is on both grids, slot 57 only on the chunk's
  // (65,664 is 128 bytes into unit 1), slot 56 straddles units 0 and 1.
  ASSERT_TRUE(restorer.Claim(GlobalAddress{2, 0}, 1152).ok());
  EXPECT_EQ(source.carved_bytes(), kSmallSlabBytes);
  ASSERT_TRUE(restorer.Claim(GlobalAddress{2, 57 * 1152}, 1152).ok());
  EXPECT_EQ(source.carved_bytes(), 1u << 20) << "the whole chunk is the slab now";
  ASSERT_TRUE(restorer.Claim(GlobalAddress{2, 56 * 1152}, 1152).ok());
  ASSERT_TRUE(restorer.Claim(GlobalAddress{2, 1152}, 1152).ok());
  absl::StatusOr<Slab> slab = source.SlabOf(GlobalAddress{2, 56 * 1152});
  ASSERT_TRUE(slab.ok());
  EXPECT_EQ(slab->base.offset, 0u);
  EXPECT_EQ(slab->bytes, 1u << 20);
  EXPECT_EQ(restorer.Claim(GlobalAddress{2, kSmallSlabBytes}, 1152).code(), absl::StatusCode::kFailedPrecondition)
      << "on the small-slab grid of unit 1 but not on the chunk's";
  EXPECT_EQ(restorer.Claim(GlobalAddress{2, 4 * kSmallSlabBytes}, 64).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(restorer.Free(GlobalAddress{2, 57 * 1152}).ok());
  EXPECT_EQ(restorer.Free(GlobalAddress{2, kSmallSlabBytes}).code(), absl::StatusCode::kInvalidArgument);

  // A chunk with a small slab of a class whose units do not start on the chunk's grid cannot become
  // chunk-wide: the two layouts would overlap.
  ASSERT_TRUE(restorer.Claim(GlobalAddress{2, (1 << 20) + kSmallSlabBytes}, 1152).ok());
  EXPECT_EQ(restorer.Claim(GlobalAddress{2, (1 << 20) + 57 * 1152}, 1152).code(), absl::StatusCode::kFailedPrecondition);
  // New allocations never land in the old chunk.
  SlabAllocator allocator(&source);
  for (int i = 0; i < 100; ++i) {
    absl::StatusOr<Slot> slot = allocator.Allocate(1100);
    ASSERT_TRUE(slot.ok());
    EXPECT_GE(slot->address.offset, 1u << 20);
  }
}

TEST_F(MemoryTest, AnAdoptedRegionKeepsItsUsedSlabsAndCarvesTheRest) {
  auto own = NewRegion(1, 1 << 20);
  auto adopted = NewRegion(2, 4 << 20);  // four 1 MiB chunks: a promoted copy
  SlabSource source({own.get()});
  // Bad slots: nothing is added.
  EXPECT_EQ(source.AddRegion(adopted.get(), {Slot{GlobalAddress{2, 100}, 128}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source.AddRegion(adopted.get(), {Slot{GlobalAddress{3, 0}, 64}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source.AddRegion(adopted.get(), {Slot{GlobalAddress{2, 0}, 64}, Slot{GlobalAddress{2, 128}, 128}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source.AddRegion(adopted.get(), {Slot{GlobalAddress{2, (4 << 20) - 64}, 128}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source.AddRegion(adopted.get(), {Slot{GlobalAddress{2, 0}, 20480}, Slot{GlobalAddress{2, 2 * kSmallSlabBytes}, 64}})
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source.carved_bytes(), 0u) << "a refused region counts nothing";
  // Objects in small slab 0 (of chunk 0), chunk 2 (20 KiB, chunk-wide) and small slab 1 of chunk 3.
  ASSERT_TRUE(source
                  .AddRegion(adopted.get(), {Slot{GlobalAddress{2, 256}, 128}, Slot{GlobalAddress{2, (2 << 20) + 20480}, 20480},
                                             Slot{GlobalAddress{2, (3 << 20) + kSmallSlabBytes + 64}, 64}})
                  .ok());
  EXPECT_EQ(source.carved_bytes(), 2 * kSmallSlabBytes + (1 << 20));
  SlabAllocator allocator(&source);
  std::set<uint64_t> chunks;
  for (int i = 0; i < 2; ++i) {  // the own region's chunk, then the adopted region's chunk 1
    auto slot = allocator.Allocate(kMaxSlotBytes);
    ASSERT_TRUE(slot.ok()) << slot.status();
    chunks.insert(uint64_t{slot->address.region} << 32 | slot->address.offset >> 20);
  }
  EXPECT_EQ(chunks, (std::set<uint64_t>{uint64_t{1} << 32, uint64_t{2} << 32 | 1}));
  EXPECT_EQ(allocator.Allocate(kMaxSlotBytes).status().code(), absl::StatusCode::kResourceExhausted)
      << "chunks 0 and 3 hold small slabs";
  // Small slabs (16 slots of 4 KiB each) take the free units of chunks 0 and 3: 15 + 15.
  std::set<uint64_t> units;
  for (int i = 0; i < 30 * 16; ++i) {
    auto slot = allocator.Allocate(4096);
    ASSERT_TRUE(slot.ok()) << i << ": " << slot.status();
    EXPECT_EQ(slot->address.region, 2u);
    units.insert(slot->address.offset / kSmallSlabBytes);
  }
  EXPECT_EQ(units.size(), 30u);
  EXPECT_FALSE(units.contains(0) || units.contains(3 * 16 + 1));
  EXPECT_EQ(allocator.Allocate(4096).status().code(), absl::StatusCode::kResourceExhausted);
  // An object in a used slab can be freed, and its slot is reused.
  ASSERT_TRUE(allocator.Free(GlobalAddress{2, (3 << 20) + kSmallSlabBytes + 64}).ok());
  auto reused = allocator.Allocate(64);
  ASSERT_TRUE(reused.ok());
  EXPECT_EQ(reused->address, (GlobalAddress{2, (3 << 20) + kSmallSlabBytes + 64}));
}

TEST_F(MemoryTest, ThreadsAllocateDisjointSlots) {
  auto region = NewRegion(2, 64 << 20);
  SlabSource source({region.get()});
  constexpr int kThreads = 4, kPerThread = 5000;
  std::vector<std::vector<uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      SlabAllocator allocator(&source);
      for (int i = 0; i < kPerThread; ++i) {
        auto slot = allocator.Allocate(64 + (i % 3) * 100);
        if (slot.ok()) got[t].push_back(slot->address.raw());
      }
    });
  }
  for (auto& t : threads) t.join();
  std::set<uint64_t> all;
  for (auto& v : got) {
    EXPECT_EQ(v.size(), size_t{kPerThread});
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.size(), size_t{kThreads * kPerThread});
}

}  // namespace
}  // namespace fathom::memory
