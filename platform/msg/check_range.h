// CheckRange: the bounds check a handler applies to an address it was sent, before touching memory.
//
// A global address is 64 bits, region id (high 32) and offset (low 32) (DESIGN.md, platform/memory). A
// handler that reads or writes local memory on a peer's behalf must never trust the address: it checks it
// against the regions this node holds, and returns the error, which the Messenger counts as a rejected
// message (RejectReason::kBadPayload) and sends back as the caller's status.
//
//   absl::Status HandleWrite(const Message& m, std::string* reply) {
//     if (m.payload.size() < 8) return absl::InvalidArgumentError("short write request");
//     const uint64_t address = LoadLittleEndian64(m.payload.data());
//     const std::string_view bytes = m.payload.substr(8);
//     RETURN_IF_ERROR(CheckRange(region_sizes, address, bytes.size()));
//     std::memcpy(regions[RegionOf(address)] + OffsetOf(address), bytes.data(), bytes.size());
//     return absl::OkStatus();
//   }
#ifndef FATHOM_PLATFORM_MSG_CHECK_RANGE_H_
#define FATHOM_PLATFORM_MSG_CHECK_RANGE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace fathom::msg {

constexpr uint32_t RegionOf(uint64_t global_address) { return static_cast<uint32_t>(global_address >> 32); }
constexpr uint32_t OffsetOf(uint64_t global_address) { return static_cast<uint32_t>(global_address); }
constexpr uint64_t GlobalAddress(uint32_t region, uint32_t offset) { return (uint64_t{region} << 32) | offset; }

// `region_sizes[id]` is the size in bytes of region `id` on this node, 0 if this node does not hold it.
// OK if bytes [offset, offset + length) of the address's region are all inside it; InvalidArgument for a
// zero length; OutOfRange for a region this node does not hold or bytes outside the region (no overflow).
absl::Status CheckRange(absl::Span<const uint64_t> region_sizes, uint64_t global_address, uint64_t length);

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_CHECK_RANGE_H_
