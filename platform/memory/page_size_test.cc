#include "platform/memory/page_size.h"

#include <sys/mman.h>

#include "gtest/gtest.h"

namespace fathom::memory {
namespace {

constexpr char kSmaps[] =
    "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
    "Size:                328 kB\n"
    "KernelPageSize:        4 kB\n"
    "MMUPageSize:           4 kB\n"
    "VmFlags: rd ex mr mw me dw\n"
    "7f4a00000000-7f4a40000000 rw-s 00000000 00:01 11501748    /SYSV00000000 (deleted)\n"
    "Size:            1048576 kB\n"
    "KernelPageSize:     2048 kB\n"
    "MMUPageSize:        2048 kB\n";

TEST(PageSizeTest, ReadsThePageSizeOfEachAddressesMapping) {
  const void* addresses[] = {reinterpret_cast<const void*>(0x7f4a00000000), reinterpret_cast<const void*>(0x400010),
                             reinterpret_cast<const void*>(0x7f4a3fffffff)};
  auto pages = KernelPageBytesIn(kSmaps, addresses);
  ASSERT_TRUE(pages.ok()) << pages.status();
  EXPECT_EQ(*pages, (std::vector<uint64_t>{2u << 20, 4096, 2u << 20}));
}

TEST(PageSizeTest, AnAddressInNoMappingIsNotFound) {
  const void* outside[] = {reinterpret_cast<const void*>(0x7f4a40000000)};  // one past the second mapping
  EXPECT_EQ(KernelPageBytesIn(kSmaps, outside).status().code(), absl::StatusCode::kNotFound);
}

TEST(PageSizeTest, LyingLinesAreRefused) {
  const void* addresses[] = {reinterpret_cast<const void*>(0x400010)};
  EXPECT_EQ(KernelPageBytesIn("KernelPageSize: 4 kB\n", addresses).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(KernelPageBytesIn("00400000-00452000 r-xp\nKernelPageSize: four kB\n", addresses).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(KernelPageBytesIn("00400000-00452000 r-xp\nKernelPageSize: 0 kB\n", addresses).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(KernelPageBytesIn("00400000-00452000 r-xp\nKernelPageSize: 4\n", addresses).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A range whose end is not after its start is no mapping: the address is then in none.
  EXPECT_EQ(KernelPageBytesIn("00452000-00400000 r-xp\nKernelPageSize: 4 kB\n", addresses).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PageSizeTest, ThisProcessesOrdinaryMemoryHasSmallPages) {
  void* mapped = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  const void* addresses[] = {mapped};
  auto pages = KernelPageBytes(addresses);
  munmap(mapped, 1 << 20);
  ASSERT_TRUE(pages.ok()) << pages.status();
  EXPECT_EQ((*pages)[0], 4096u);
}

TEST(PageSizeTest, HugeTlbMemoryHasHugePages) {
  constexpr size_t kBytes = 2 << 20;
  void* mapped = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
  if (mapped == MAP_FAILED) GTEST_SKIP() << "no huge pages reserved on this host (vm.nr_hugepages)";
  const void* addresses[] = {mapped};
  auto pages = KernelPageBytes(addresses);
  munmap(mapped, kBytes);
  ASSERT_TRUE(pages.ok()) << pages.status();
  EXPECT_GT((*pages)[0], 4096u);
}

}  // namespace
}  // namespace fathom::memory
