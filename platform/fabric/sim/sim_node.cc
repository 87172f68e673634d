// SimNode: one node's Fabric: memory registration and workers.
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "platform/fabric/sim/sim_objects.h"

namespace fathom::fabric::sim::internal {

namespace {
// Page alignment, as shared-memory regions on a real fabric have; more than any atomic or cache line needs.
constexpr size_t kRegionAlignment = 4096;
}  // namespace

absl::StatusOr<std::unique_ptr<Region>> SimNode::AllocateRegion(size_t size) {
  if (size == 0) return absl::InvalidArgumentError("region size must be positive");
  if (size > std::numeric_limits<size_t>::max() - kRegionAlignment) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot allocate a region of ", size, " bytes"));
  }
  // aligned_alloc wants a multiple of the alignment.
  const size_t rounded = (size + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment;
  AlignedBytes memory(static_cast<std::byte*>(std::aligned_alloc(kRegionAlignment, rounded)));
  if (memory == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot allocate a region of ", size, " bytes"));
  }
  std::memset(memory.get(), 0, rounded);
  std::byte* data = memory.get();
  auto region = std::make_unique<SimRegion>(core_, data, size, std::move(memory));
  region->Register(node_);
  return std::unique_ptr<Region>(std::move(region));
}

absl::StatusOr<std::unique_ptr<Region>> SimNode::RegisterRegion(void* address, size_t size) {
  if (address == nullptr) return absl::InvalidArgumentError("RegisterRegion: null address");
  if (size == 0) return absl::InvalidArgumentError("region size must be positive");
  auto region = std::make_unique<SimRegion>(core_, static_cast<std::byte*>(address), size, nullptr);
  region->Register(node_);
  return std::unique_ptr<Region>(std::move(region));
}

absl::StatusOr<std::unique_ptr<Worker>> SimNode::CreateWorker() {
  return std::unique_ptr<Worker>(std::make_unique<SimWorker>(core_, node_));
}

}  // namespace fathom::fabric::sim::internal
