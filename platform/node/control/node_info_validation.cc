#include "platform/node/control/node_info_validation.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "platform/fabric/fabric.h"

namespace fathom::control {

static_assert(static_cast<int>(FABRIC_KIND_UCX) == static_cast<int>(fabric::FabricKind::kUcx));
static_assert(static_cast<int>(FABRIC_KIND_SIM) == static_cast<int>(fabric::FabricKind::kSim));

FabricKind ToProtoFabricKind(fabric::FabricKind kind) { return static_cast<FabricKind>(kind); }

namespace {

// Builds "field: problem" so every error names where it is.
absl::Status Invalid(const std::string& field, const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

std::string Indexed(const std::string& field, const char* member, size_t index) {
  return absl::StrCat(field, ".", member, "[", index, "]");
}

absl::Status ValidateIdentity(const NodeInfo& info, const NodeInfoExpectations& expect, const std::string& field) {
  const ControlLimits& limits = expect.limits;
  if (info.node_id() == 0) return Invalid(field + ".node_id", "0 is not a node id");
  if (info.cluster_name().empty()) return Invalid(field + ".cluster_name", "empty");
  if (info.cluster_name().size() > limits.max_cluster_name_bytes) {
    return Invalid(field + ".cluster_name",
                   absl::StrCat(info.cluster_name().size(), " bytes, at most ", limits.max_cluster_name_bytes));
  }
  if (info.cluster_name() != expect.cluster_name) {
    return Invalid(field + ".cluster_name",
                   absl::StrCat("'", info.cluster_name(), "' is not this cluster ('", expect.cluster_name, "')"));
  }
  if (info.protocol_version() != expect.protocol_version) {
    return Invalid(field + ".protocol_version", absl::StrCat(info.protocol_version(), ", this node speaks ",
                                                             expect.protocol_version));
  }
  const FabricKind kind = ToProtoFabricKind(expect.fabric_kind);
  if (info.fabric_kind() != kind) {
    return Invalid(field + ".fabric_kind", absl::StrCat(FabricKind_Name(info.fabric_kind()), " (",
                                                        static_cast<int>(info.fabric_kind()),
                                                        "), this node uses ", FabricKind_Name(kind)));
  }
  if (info.incarnation() == 0) return Invalid(field + ".incarnation", "0 is reserved for 'unknown'");
  return absl::OkStatus();
}

absl::Status ValidateWorkers(const NodeInfo& info, const NodeInfoExpectations& expect, const std::string& field) {
  const ControlLimits& limits = expect.limits;
  const size_t count = info.worker_addresses_size();
  if (count == 0) return Invalid(field + ".worker_addresses", "a node has at least one worker");
  if (count > limits.max_workers) {
    return Invalid(field + ".worker_addresses", absl::StrCat(count, " workers, at most ", limits.max_workers));
  }
  for (size_t i = 0; i < count; ++i) {
    const std::string& blob = info.worker_addresses(i);
    const std::string where = Indexed(field, "worker_addresses", i);
    if (blob.empty()) return Invalid(where, "empty");
    if (blob.size() > limits.max_worker_address_bytes) {
      return Invalid(where, absl::StrCat(blob.size(), " bytes, at most ", limits.max_worker_address_bytes));
    }
    // Decoded here, not only at Connect: UCX aborts the process on a malformed address (fabric.md).
    absl::StatusOr<std::string> payload = fabric::DecodeAddress(expect.fabric_kind, blob);
    if (!payload.ok()) return Invalid(where, std::string(payload.status().message()));
  }
  return absl::OkStatus();
}

absl::Status ValidateRegion(const RegionInfo& region, const ControlLimits& limits, const std::string& where) {
  if (region.owner_node_id() == 0) return Invalid(where + ".owner_node_id", "0 is not a node id");
  if (region.size() == 0) return Invalid(where + ".size", "0");
  if (region.size() > limits.max_region_bytes) {
    return Invalid(where + ".size", absl::StrCat(region.size(), " bytes, at most ", limits.max_region_bytes));
  }
  absl::StatusOr<fabric::RegionDescriptor> descriptor = fabric::RegionDescriptor::Parse(region.region_descriptor());
  if (!descriptor.ok()) return Invalid(where + ".region_descriptor", std::string(descriptor.status().message()));
  if (descriptor->remote_key.empty()) return Invalid(where + ".region_descriptor", "no remote key");
  if (descriptor->length != region.size()) {
    return Invalid(where + ".region_descriptor",
                   absl::StrCat("describes ", descriptor->length, " bytes, the region has ", region.size()));
  }
  return absl::OkStatus();
}

absl::Status ValidateRegions(const NodeInfo& info, const ControlLimits& limits, const std::string& field) {
  const size_t count = info.regions_size();
  if (count > limits.max_regions) {
    return Invalid(field + ".regions", absl::StrCat(count, " regions, at most ", limits.max_regions));
  }
  absl::flat_hash_set<uint32_t> seen;
  for (size_t i = 0; i < count; ++i) {
    const RegionInfo& region = info.regions(i);
    const std::string where = Indexed(field, "regions", i);
    if (!seen.insert(region.region_id()).second) {
      return Invalid(where + ".region_id", absl::StrCat("region ", region.region_id(), " is listed twice"));
    }
    absl::Status status = ValidateRegion(region, limits, where);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status ValidateRings(const NodeInfo& info, const ControlLimits& limits, const std::string& field) {
  const size_t count = info.rings_size();
  if (count > limits.max_rings) {
    return Invalid(field + ".rings", absl::StrCat(count, " rings, at most ", limits.max_rings));
  }
  absl::flat_hash_set<std::pair<uint32_t, uint32_t>> seen;
  for (size_t i = 0; i < count; ++i) {
    const RingLocation& ring = info.rings(i);
    const std::string where = Indexed(field, "rings", i);
    if (ring.sender_node_id() == 0) return Invalid(where + ".sender_node_id", "0 is not a node id");
    if (ring.sender_thread() >= limits.max_workers) {
      return Invalid(where + ".sender_thread",
                     absl::StrCat(ring.sender_thread(), ", threads are numbered below ", limits.max_workers));
    }
    if (!seen.insert({ring.sender_node_id(), ring.sender_thread()}).second) {
      return Invalid(where, absl::StrCat("sender node ", ring.sender_node_id(), " thread ", ring.sender_thread(),
                                         " is listed twice"));
    }
    if (ring.location().empty()) return Invalid(where + ".location", "empty");
    if (ring.location().size() > limits.max_ring_location_bytes) {
      return Invalid(where + ".location", absl::StrCat(ring.location().size(), " bytes, at most ",
                                                       limits.max_ring_location_bytes));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateNodeInfo(const NodeInfo& info, const NodeInfoExpectations& expect, std::string_view field) {
  const std::string name(field);
  absl::Status status = ValidateIdentity(info, expect, name);
  if (status.ok()) status = ValidateWorkers(info, expect, name);
  if (status.ok()) status = ValidateRegions(info, expect.limits, name);
  if (status.ok()) status = ValidateRings(info, expect.limits, name);
  return status;
}

absl::Status ValidateShutdownRequest(const ShutdownRequest& request, const ControlLimits& limits) {
  if (request.reason().size() > limits.max_shutdown_reason_bytes) {
    return Invalid("reason", absl::StrCat(request.reason().size(), " bytes, at most ",
                                          limits.max_shutdown_reason_bytes));
  }
  return absl::OkStatus();
}

}  // namespace fathom::control
