// RegionTable: every region this node knows (its own and its peers'), and the bounds checks that keep
// an address from any input (a message, a log record, an API argument) inside registered memory.
//
//   RegionTable table;
//   RETURN_IF_ERROR(table.Add(info));
//   RETURN_IF_ERROR(table.CheckRange(address, length));   // before any access on a peer's say-so
#ifndef FATHOM_PLATFORM_MEMORY_REGION_TABLE_H_
#define FATHOM_PLATFORM_MEMORY_REGION_TABLE_H_

#include <cstdint>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "platform/memory/global_address.h"
#include "platform/memory/region.h"

namespace fathom::memory {

// Thread-safe; regions change on the control path only.
class RegionTable {
 public:
  // AlreadyExists if the id is known with different contents; InvalidArgument for id 0, a size over
  // 4 GiB, or a descriptor whose length differs from the size.
  absl::Status Add(const RegionInfo& info);
  void Remove(uint32_t id);
  std::optional<RegionInfo> Find(uint32_t id) const;
  size_t size() const;

  // OK if [address, address + length) lies inside one known region; NotFound for an unknown region,
  // OutOfRange otherwise (including overflow and length 0).
  absl::Status CheckRange(GlobalAddress address, uint64_t length) const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint32_t, RegionInfo> regions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fathom::memory

#endif  // FATHOM_PLATFORM_MEMORY_REGION_TABLE_H_
