#include "platform/msg/ring_location.h"


#include "absl/strings/str_cat.h"
#include "platform/base/byte_order.h"
#include "platform/fabric/wire.h"

namespace fathom::msg {

namespace {


// Bytes [offset, offset + length) inside a region of `region_length` bytes, without overflow.
bool Inside(uint64_t offset, uint64_t length, uint64_t region_length) {
  return offset <= region_length && length <= region_length - offset;
}

// Checks the common envelope of a location blob: size, magic, descriptor length, checksum. Returns the
// descriptor bytes; `fixed` is the size of the fields before the descriptor length.
absl::StatusOr<std::string_view> OpenBlob(std::string_view bytes, uint32_t magic, size_t fixed, const char* what) {
  if (bytes.size() < fixed + 4 + 8) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": truncated (", bytes.size(), " bytes)"));
  }
  if (LoadU32(bytes.data()) != magic) return absl::InvalidArgumentError(absl::StrCat(what, ": bad magic"));
  const uint32_t descriptor_length = LoadU32(bytes.data() + fixed);
  if (descriptor_length > kMaxDescriptorBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": descriptor length ", descriptor_length, " exceeds ", kMaxDescriptorBytes));
  }
  if (bytes.size() != fixed + 4 + descriptor_length + 8) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": size ", bytes.size(),
                                                   " does not match descriptor length ", descriptor_length));
  }
  if (absl::Status s = fabric::StripChecksum(bytes, what).status(); !s.ok()) return s;
  return bytes.substr(fixed + 4, descriptor_length);
}

void CloseBlob(std::string& out, const fabric::RegionDescriptor& region) {
  const std::string descriptor = region.Serialize();
  AppendU32(out, static_cast<uint32_t>(descriptor.size()));
  out.append(descriptor);
  fabric::AppendChecksum(out);
}

}  // namespace

bool SameRegion(const fabric::RegionDescriptor& descriptor, const fabric::Region& region) {
  const fabric::RegionDescriptor& own = region.descriptor();
  return descriptor.base == own.base && descriptor.length == own.length && descriptor.remote_key == own.remote_key;
}

absl::Status RingLocation::Validate() const {
  if (absl::StatusOr<RingGeometry> g = RingGeometry::Make(capacity, max_payload); !g.ok()) return g.status();
  if (offset % kRecordAlignment != 0) {
    return absl::InvalidArgumentError(absl::StrCat("ring offset ", offset, " is not a multiple of 8"));
  }
  if (!Inside(offset, capacity, region.length)) {
    return absl::InvalidArgumentError(absl::StrCat("ring [", offset, ", +", capacity, ") outside its region of ",
                                                   region.length, " bytes"));
  }
  return absl::OkStatus();
}

RingGeometry RingLocation::geometry() const { return *RingGeometry::Make(capacity, max_payload); }

// Layout: magic u32, capacity u32, max_payload u32, reserved u32, offset u64, session u64,
// descriptor_length u32, descriptor, checksum u64.
std::string RingLocation::Serialize() const {
  std::string out;
  AppendU32(out, kRingLocationMagic);
  AppendU32(out, capacity);
  AppendU32(out, max_payload);
  AppendU32(out, 0);
  AppendU64(out, offset);
  AppendU64(out, session);
  CloseBlob(out, region);
  return out;
}

absl::StatusOr<RingLocation> RingLocation::Parse(std::string_view bytes) {
  constexpr size_t kFixed = 32;
  absl::StatusOr<std::string_view> descriptor = OpenBlob(bytes, kRingLocationMagic, kFixed, "ring location");
  if (!descriptor.ok()) return descriptor.status();
  if (LoadU32(bytes.data() + 12) != 0) return absl::InvalidArgumentError("ring location: reserved bits set");
  absl::StatusOr<fabric::RegionDescriptor> region = fabric::RegionDescriptor::Parse(*descriptor);
  if (!region.ok()) return region.status();
  RingLocation r;
  r.region = std::move(*region);
  r.capacity = LoadU32(bytes.data() + 4);
  r.max_payload = LoadU32(bytes.data() + 8);
  r.offset = LoadU64(bytes.data() + 16);
  r.session = LoadU64(bytes.data() + 24);
  if (absl::Status valid = r.Validate(); !valid.ok()) return valid;
  return r;
}

absl::StatusOr<RingLocation> MakeRingLocation(const fabric::Region& region, uint64_t offset, uint32_t capacity,
                                              uint64_t session, uint32_t max_payload) {
  RingLocation r;
  r.region = region.descriptor();
  r.offset = offset;
  r.capacity = capacity;
  r.max_payload = max_payload != 0 ? max_payload : RingGeometry::DefaultMaxPayload(capacity);
  r.session = session;
  if (absl::Status valid = r.Validate(); !valid.ok()) return valid;
  return r;
}

absl::Status CreditLocation::Validate() const {
  if (offset % kRecordAlignment != 0) {
    return absl::InvalidArgumentError(absl::StrCat("credit offset ", offset, " is not a multiple of 8"));
  }
  if (!Inside(offset, kCreditRecordSize, region.length)) {
    return absl::InvalidArgumentError(
        absl::StrCat("credit word at ", offset, " outside its region of ", region.length, " bytes"));
  }
  return absl::OkStatus();
}

// Layout: magic u32, reserved u32, offset u64, descriptor_length u32, descriptor, checksum u64.
std::string CreditLocation::Serialize() const {
  std::string out;
  AppendU32(out, kCreditLocationMagic);
  AppendU32(out, 0);
  AppendU64(out, offset);
  CloseBlob(out, region);
  return out;
}

absl::StatusOr<CreditLocation> CreditLocation::Parse(std::string_view bytes) {
  constexpr size_t kFixed = 16;
  absl::StatusOr<std::string_view> descriptor =
      OpenBlob(bytes, kCreditLocationMagic, kFixed, "credit location");
  if (!descriptor.ok()) return descriptor.status();
  if (LoadU32(bytes.data() + 4) != 0) return absl::InvalidArgumentError("credit location: reserved bits set");
  absl::StatusOr<fabric::RegionDescriptor> region = fabric::RegionDescriptor::Parse(*descriptor);
  if (!region.ok()) return region.status();
  CreditLocation c;
  c.region = std::move(*region);
  c.offset = LoadU64(bytes.data() + 8);
  if (absl::Status valid = c.Validate(); !valid.ok()) return valid;
  return c;
}

absl::StatusOr<CreditLocation> MakeCreditLocation(const fabric::Region& region, uint64_t offset) {
  CreditLocation c;
  c.region = region.descriptor();
  c.offset = offset;
  if (absl::Status valid = c.Validate(); !valid.ok()) return valid;
  return c;
}

}  // namespace fathom::msg
