#include "platform/msg/check_range.h"

#include "absl/strings/str_cat.h"

namespace fathom::msg {

absl::Status CheckRange(absl::Span<const uint64_t> region_sizes, uint64_t global_address, uint64_t length) {
  const uint32_t region = RegionOf(global_address);
  const uint64_t offset = OffsetOf(global_address);
  if (length == 0) return absl::InvalidArgumentError("zero-length range");
  if (region >= region_sizes.size() || region_sizes[region] == 0) {
    return absl::OutOfRangeError(absl::StrCat("region ", region, " is not held by this node"));
  }
  const uint64_t size = region_sizes[region];
  if (offset >= size || length > size - offset) {
    return absl::OutOfRangeError(absl::StrCat("bytes [", offset, ", +", length, ") outside region ", region,
                                              " of ", size, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace fathom::msg
