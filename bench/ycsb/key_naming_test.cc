#include "bench/ycsb/key_naming.h"

#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

// YCSB's Utils.fnvhash64 written the way the Java reads, with signed longs: `octet = val & 0xff;
// val = val >> 8; hashval ^= octet; hashval *= FNV_PRIME_64;` then Math.abs. The expected values below
// were computed independently (Python, arbitrary precision, reduced mod 2^64); "user6284781860667377211"
// is the first key every YCSB load writes, familiar from YCSB logs.
TEST(KeyNamingTest, FnvHashMatchesYcsb) {
  EXPECT_EQ(YcsbFnvHash64(0), 6284781860667377211LL);
  EXPECT_EQ(YcsbFnvHash64(1), 8517097267634966620LL);
  EXPECT_EQ(YcsbFnvHash64(2), 1820151046732198393LL);
  EXPECT_EQ(YcsbFnvHash64(999), 2071219101098386137LL);
  EXPECT_EQ(YcsbFnvHash64(1000), 5952875239596136740LL);
  EXPECT_EQ(YcsbFnvHash64(123456789), 2350796791908741607LL);
}

TEST(KeyNamingTest, HashIsNeverNegativeForOrdinaryInputs) {
  for (int64_t v = -1000; v < 100000; ++v) ASSERT_GE(YcsbFnvHash64(v), 0) << v;
}

TEST(KeyNamingTest, HashedKeysAreUserPlusHash) {
  EXPECT_EQ(BuildKeyName(0, /*ordered=*/false, /*zero_padding=*/1), "user6284781860667377211");
  EXPECT_EQ(BuildKeyName(1, false, 1), "user8517097267634966620");
  EXPECT_EQ(BuildKeyName(999, false, 1), "user2071219101098386137");
  // Padding only matters when it exceeds the digits.
  EXPECT_EQ(BuildKeyName(2, false, 25), "user0000001820151046732198393");
}

TEST(KeyNamingTest, OrderedKeysArePaddedKeyNumbers) {
  EXPECT_EQ(BuildKeyName(7, /*ordered=*/true, /*zero_padding=*/1), "user7");
  EXPECT_EQ(BuildKeyName(7, true, 4), "user0007");
  EXPECT_EQ(BuildKeyName(12345, true, 4), "user12345");
}

}  // namespace
}  // namespace fathom::ycsb
