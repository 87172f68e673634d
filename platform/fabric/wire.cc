#include "platform/fabric/wire.h"

#include <xxhash.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/fabric/fabric.h"

namespace fathom::fabric {

namespace {
uint64_t Checksum(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }
}  // namespace

void AppendChecksum(std::string& out) { AppendU64(out, Checksum(out)); }

absl::StatusOr<std::string_view> StripChecksum(std::string_view bytes, const char* what) {
  if (bytes.size() < 8) return absl::InvalidArgumentError(absl::StrCat(what, ": truncated"));
  std::string_view body = bytes.substr(0, bytes.size() - 8);
  if (LoadU64(bytes.data() + body.size()) != Checksum(body)) {
    return absl::DataLossError(absl::StrCat(what, ": checksum mismatch"));
  }
  return body;
}

std::string RegionDescriptor::Serialize() const {
  std::string out;
  out.reserve(32 + remote_key.size());
  AppendU32(out, kRegionDescriptorMagic);
  AppendU64(out, base);
  AppendU64(out, length);
  AppendU32(out, static_cast<uint32_t>(remote_key.size()));
  out.append(remote_key);
  AppendChecksum(out);
  return out;
}

absl::StatusOr<RegionDescriptor> RegionDescriptor::Parse(std::string_view bytes) {
  constexpr size_t kFixed = 4 + 8 + 8 + 4;
  if (bytes.size() < kFixed + 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("region descriptor: truncated (", bytes.size(), " bytes, need at least ", kFixed + 8, ")"));
  }
  if (LoadU32(bytes.data()) != kRegionDescriptorMagic) {
    return absl::InvalidArgumentError("region descriptor: bad magic");
  }
  uint32_t key_length = LoadU32(bytes.data() + 20);
  if (key_length > kMaxRemoteKeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat("region descriptor: remote key length ", key_length,
                                                   " exceeds ", kMaxRemoteKeyBytes));
  }
  if (bytes.size() != kFixed + key_length + 8) {
    return absl::InvalidArgumentError(absl::StrCat("region descriptor: length ", bytes.size(),
                                                   " does not match key length ", key_length));
  }
  auto body = StripChecksum(bytes, "region descriptor");
  if (!body.ok()) return body.status();
  RegionDescriptor d;
  d.base = LoadU64(bytes.data() + 4);
  d.length = LoadU64(bytes.data() + 12);
  d.remote_key.assign(bytes.data() + kFixed, key_length);
  if (d.base + d.length < d.base) return absl::InvalidArgumentError("region descriptor: base+length overflows");
  return d;
}

std::string EncodeAddress(FabricKind kind, std::string_view payload) {
  std::string out;
  AppendU32(out, kAddressMagic);
  out.push_back(static_cast<char>(kind));
  out.append(3, '\0');
  AppendU32(out, static_cast<uint32_t>(payload.size()));
  out.append(payload);
  AppendChecksum(out);
  return out;
}

absl::StatusOr<std::string> DecodeAddress(FabricKind kind, std::string_view blob) {
  constexpr size_t kFixed = 12;
  if (blob.size() < kFixed + 8) return absl::InvalidArgumentError("fabric address: truncated");
  if (LoadU32(blob.data()) != kAddressMagic) return absl::InvalidArgumentError("fabric address: bad magic");
  if (static_cast<uint8_t>(blob[4]) != static_cast<uint8_t>(kind)) {
    return absl::InvalidArgumentError(absl::StrCat("fabric address: from fabric kind ",
                                                   static_cast<int>(static_cast<uint8_t>(blob[4])), ", expected ",
                                                   static_cast<int>(kind)));
  }
  uint32_t length = LoadU32(blob.data() + 8);
  if (length > kMaxAddressPayloadBytes || blob.size() != kFixed + length + 8) {
    return absl::InvalidArgumentError(absl::StrCat("fabric address: payload length ", length,
                                                   " does not match blob size ", blob.size()));
  }
  auto body = StripChecksum(blob, "fabric address");
  if (!body.ok()) return body.status();
  return std::string(blob.substr(kFixed, length));
}

absl::StatusOr<std::string> DecodePeerAddress(FabricKind kind, std::string_view blob) {
  absl::StatusOr<std::string> payload = DecodeAddress(kind, blob);
  if (!payload.ok()) return absl::InvalidArgumentError(std::string(payload.status().message()));
  return payload;
}

}  // namespace fathom::fabric
