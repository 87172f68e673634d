#include "platform/fabric/sim/sim_keys.h"

#include "absl/strings/str_cat.h"
#include "platform/fabric/wire.h"

namespace fathom::fabric::sim::internal {

namespace {
constexpr size_t kWorkerAddressBytes = 4 + 8 + 4 + 4;
constexpr size_t kRemoteKeyBytes = 4 + 8 + 4 + 4 + 8;
}  // namespace

std::string EncodeWorkerAddress(const WorkerAddress& address) {
  std::string payload;
  AppendU32(payload, kWorkerAddressMagic);
  AppendU64(payload, address.network);
  AppendU32(payload, address.node);
  AppendU32(payload, address.worker);
  return EncodeAddress(FabricKind::kSim, payload);
}

absl::StatusOr<WorkerAddress> DecodeWorkerAddress(std::string_view blob) {
  absl::StatusOr<std::string> payload = DecodePeerAddress(FabricKind::kSim, blob);
  if (!payload.ok()) return payload.status();
  if (payload->size() != kWorkerAddressBytes || LoadU32(payload->data()) != kWorkerAddressMagic) {
    return absl::InvalidArgumentError(
        absl::StrCat("sim worker address: malformed payload (", payload->size(), " bytes)"));
  }
  WorkerAddress address;
  address.network = LoadU64(payload->data() + 4);
  address.node = LoadU32(payload->data() + 12);
  address.worker = LoadU32(payload->data() + 16);
  return address;
}

std::string EncodeRemoteKey(const RemoteKey& key) {
  std::string out;
  AppendU32(out, kRemoteKeyMagic);
  AppendU64(out, key.network);
  AppendU32(out, key.region.node);
  AppendU32(out, key.region.region);
  AppendU64(out, key.region.generation);
  return out;
}

absl::StatusOr<RemoteKey> DecodeRemoteKey(std::string_view bytes) {
  if (bytes.size() != kRemoteKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("sim remote key: ", bytes.size(), " bytes, expected ", kRemoteKeyBytes));
  }
  if (LoadU32(bytes.data()) != kRemoteKeyMagic) return absl::InvalidArgumentError("sim remote key: bad magic");
  RemoteKey key;
  key.network = LoadU64(bytes.data() + 4);
  key.region.node = LoadU32(bytes.data() + 12);
  key.region.region = LoadU32(bytes.data() + 16);
  key.region.generation = LoadU64(bytes.data() + 20);
  if (key.region.generation == 0) return absl::InvalidArgumentError("sim remote key: generation 0 is never issued");
  return key;
}

}  // namespace fathom::fabric::sim::internal
