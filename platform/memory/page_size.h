// The kernel's page size behind mapped memory: 4 KiB normally, 2 MiB (or 1 GiB) where a mapping is backed by
// huge pages (UCX allocates regions as SysV shared memory and tries SHM_HUGETLB first, which succeeds when
// the host reserved huge pages: vm.nr_hugepages). Read from /proc/self/smaps, whose cost grows with the
// process's mappings: for start-up and reports, not for any data path.
#ifndef FATHOM_PLATFORM_MEMORY_PAGE_SIZE_H_
#define FATHOM_PLATFORM_MEMORY_PAGE_SIZE_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace fathom::memory {

// For each address, the page size of the mapping that holds it (KernelPageSize), in bytes; NotFound if an
// address is in no mapping.
absl::StatusOr<std::vector<uint64_t>> KernelPageBytes(std::span<const void* const> addresses);

// The same over the text of a smaps file (tests give their own); InvalidArgument if it does not parse.
absl::StatusOr<std::vector<uint64_t>> KernelPageBytesIn(std::string_view smaps,
                                                        std::span<const void* const> addresses);

}  // namespace fathom::memory

#endif  // FATHOM_PLATFORM_MEMORY_PAGE_SIZE_H_
