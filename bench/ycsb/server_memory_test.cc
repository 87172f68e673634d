#include "bench/ycsb/server_memory.h"

#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

TEST(ServerMemoryTest, RedisInfoFieldFindsTheWholeName) {
  const std::string info =
      "# Memory\r\nused_memory_human:1.2M\r\nused_memory:1234567\r\nused_memory_rss:99\r\nbad:12x\r\n";
  EXPECT_EQ(*RedisInfoField(info, "used_memory"), 1234567u);
  EXPECT_EQ(*RedisInfoField(info, "used_memory_rss"), 99u);
  EXPECT_EQ(RedisInfoField(info, "used_memory_peak").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(RedisInfoField(info, "bad").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(RedisInfoField("", "used_memory").status().code(), absl::StatusCode::kNotFound);
}

TEST(ServerMemoryTest, RedisMemoryIsItsUsedMemory) {
  const std::string info = "# Memory\r\nused_memory:1000\r\nallocator_allocated:1010\r\nallocator_active:900\r\n";
  absl::StatusOr<ServerMemory> memory = RedisMemory(info);
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_EQ(memory->taken, 1000u);
  EXPECT_EQ(memory->allocated, 1000);
  EXPECT_EQ(RedisMemory("allocator_active:1200\r\n").status().code(), absl::StatusCode::kNotFound);
}

MemberCounters Member(uint32_t id, uint64_t carved, uint64_t backups, uint64_t allocated = 0, uint64_t freed = 0) {
  return {id,
          {{"memory.carved_bytes", carved},
           {"memory.slot_bytes_allocated", allocated},
           {"memory.slot_bytes_freed", freed},
           {"txn.backups", backups},
           {"node.peers", 2}}};
}

TEST(ServerMemoryTest, ClusterMemoryCountsEveryCopy) {
  absl::StatusOr<ServerMemory> three = ClusterObjectMemory({Member(1, 100, 1, 90, 10), Member(2, 50, 1, 40), Member(3, 0, 1)});
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(three->taken, 300u);
  EXPECT_EQ(three->allocated, 2 * (80 + 40));
  EXPECT_EQ(ClusterObjectMemory({Member(1, 100, 2, 64)})->taken, 300u);
  EXPECT_EQ(ClusterObjectMemory({Member(1, 100, 2, 64)})->allocated, 192);
  EXPECT_EQ(ClusterObjectMemory({})->taken, 0u);
  const MemberCounters old{7, {{"txn.backups", 1}, {"memory.carved_bytes", 5}}};
  absl::Status missing = ClusterObjectMemory({Member(1, 1, 1), old}).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.message().find("node 7"), std::string::npos) << missing;
  absl::Status lie = ClusterObjectMemory({Member(4, 100, 1, 10, 20)}).status();
  EXPECT_EQ(lie.code(), absl::StatusCode::kDataLoss) << lie;
  EXPECT_NE(lie.message().find("node 4"), std::string::npos) << lie;
}

}  // namespace
}  // namespace fathom::ycsb
