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

MemberCounters Member(uint32_t id, uint64_t carved, uint64_t backups) {
  return {id, {{"memory.carved_bytes", carved}, {"txn.backups", backups}, {"node.peers", 2}}};
}

TEST(ServerMemoryTest, ClusterBytesCountEveryCopy) {
  EXPECT_EQ(*ClusterObjectBytes({Member(1, 100, 1), Member(2, 50, 1), Member(3, 0, 1)}), 300u);
  EXPECT_EQ(*ClusterObjectBytes({Member(1, 100, 2)}), 300u);
  EXPECT_EQ(*ClusterObjectBytes({}), 0u);
  const MemberCounters old{7, {{"txn.backups", 1}}};
  absl::Status missing = ClusterObjectBytes({Member(1, 1, 1), old}).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.message().find("node 7"), std::string::npos) << missing;
}

}  // namespace
}  // namespace fathom::ycsb
