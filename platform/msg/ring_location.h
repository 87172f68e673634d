// Where a ring and its credit word live, as nodes exchange them in the join handshake (gRPC, later).
//
// The receiving node publishes a RingLocation for each (peer node, peer thread): the region holding the ring,
// its offset, capacity, largest payload, and the session that seeds every checksum of the ring. The sending
// thread publishes a CreditLocation: the word in its own registered memory where the receiver writes its
// head back. Both serialize to checked blobs (magic, lengths, XXH3-64; docs/formats/ring.md).
//
//   ASSIGN_OR_RETURN(RingLocation ring, MakeRingLocation(*region, /*offset=*/0, /*capacity=*/64 << 10, session));
//   std::string blob = ring.Serialize();                    // ship it to the sender
//   ASSIGN_OR_RETURN(RingLocation got, RingLocation::Parse(blob));
#ifndef FATHOM_PLATFORM_MSG_RING_LOCATION_H_
#define FATHOM_PLATFORM_MSG_RING_LOCATION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "platform/fabric/fabric.h"
#include "platform/msg/ring_layout.h"

namespace fathom::msg {

inline constexpr uint32_t kRingLocationMagic = 0x314c5246;    // "FRL1"
inline constexpr uint32_t kCreditLocationMagic = 0x314c4346;  // "FCL1"
// A serialized RegionDescriptor inside a location blob is at most this long.
inline constexpr size_t kMaxDescriptorBytes = 8192;

struct RingLocation {
  fabric::RegionDescriptor region;  // the receiver's region that holds the ring
  uint64_t offset = 0;              // of the ring's first byte in the region; a multiple of 8
  uint32_t capacity = 0;            // see RingGeometry::Make
  uint32_t max_payload = 0;         // see RingGeometry::Make
  uint64_t session = 0;             // seeds the ring's checksums; fresh for every new connection

  // InvalidArgument unless the geometry is valid and the ring lies inside the region.
  absl::Status Validate() const;
  // REQUIRES: Validate() is OK.
  RingGeometry geometry() const;

  std::string Serialize() const;
  // Rejects truncated, oversized, corrupted (DataLoss) or invalid (Validate) input.
  static absl::StatusOr<RingLocation> Parse(std::string_view bytes);
};

// A ring at `offset` in a local `region`. max_payload 0 means RingGeometry::DefaultMaxPayload(capacity).
absl::StatusOr<RingLocation> MakeRingLocation(const fabric::Region& region, uint64_t offset, uint32_t capacity,
                                              uint64_t session, uint32_t max_payload = 0);

struct CreditLocation {
  fabric::RegionDescriptor region;  // the sender's region that holds the credit word
  uint64_t offset = 0;              // of the 16-byte credit record; a multiple of 8

  absl::Status Validate() const;
  std::string Serialize() const;
  static absl::StatusOr<CreditLocation> Parse(std::string_view bytes);
};

absl::StatusOr<CreditLocation> MakeCreditLocation(const fabric::Region& region, uint64_t offset);

// True if `descriptor` names the same memory as `region` (base, length and key).
bool SameRegion(const fabric::RegionDescriptor& descriptor, const fabric::Region& region);

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_RING_LOCATION_H_
