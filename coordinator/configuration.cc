#include "coordinator/configuration.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "platform/memory/global_address.h"
#include "platform/node/control/host_port.h"

namespace fathom::coordinator {
namespace {

constexpr char kMagic[4] = {'F', 'C', 'F', 'G'};
constexpr uint16_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 16;  // magic 4, version 2, reserved 2, xxh64 8

void PutLe(uint64_t v, int bytes, char* out) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>(v >> (8 * i));
}
uint64_t GetLe(const char* in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return v;
}

}  // namespace

absl::Status ValidateMember(const MemberInfo& member) {
  if (member.node_id() == 0 || member.node_id() > kMaxNodeId) {
    return absl::InvalidArgumentError(absl::StrCat("member node id ", member.node_id(), " is not in 1..", kMaxNodeId));
  }
  if (member.control_address().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("member ", member.node_id(), " has no control address"));
  }
  if (member.lease_address().size() > 255 ||
      (!member.lease_address().empty() &&
       !control::ParseHostPort(member.lease_address(), control::PortZero::kRefused).ok())) {
    return absl::InvalidArgumentError(absl::StrCat("member ", member.node_id(), " has lease address '",
                                                   member.lease_address().substr(0, 64), "', not ip:port"));
  }
  if (member.client_only() && member.regions_size() > 0) {
    return absl::InvalidArgumentError(absl::StrCat("client-only member ", member.node_id(), " lists data regions"));
  }
  absl::flat_hash_set<uint32_t> regions;
  for (const MemberRegion& r : member.regions()) {
    if (memory::OwnerOfRegion(r.region_id()) != member.node_id()) {
      return absl::InvalidArgumentError(absl::StrCat("member ", member.node_id(), " lists region ", r.region_id(),
                                                     ", which is not one of its own"));
    }
    if (r.size_bytes() == 0 || r.size_bytes() > memory::kMaxRegionBytes) {
      return absl::InvalidArgumentError(absl::StrCat("member ", member.node_id(), " lists region ", r.region_id(),
                                                     " of ", r.size_bytes(), " bytes"));
    }
    if (!regions.insert(r.region_id()).second) {
      return absl::InvalidArgumentError(absl::StrCat("member ", member.node_id(), " lists region ", r.region_id(),
                                                     " twice"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateConfiguration(const Configuration& config) {
  absl::flat_hash_set<uint32_t> members;
  absl::flat_hash_set<uint32_t> clients;  // client-only: hold nothing, manage nothing
  for (const MemberInfo& m : config.members()) {
    if (absl::Status s = ValidateMember(m); !s.ok()) return s;
    if (!members.insert(m.node_id()).second) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate member ", m.node_id()));
    }
    if (m.client_only()) clients.insert(m.node_id());
  }
  if (config.manager_id() != 0 && !members.contains(config.manager_id())) {
    return absl::InvalidArgumentError(
        absl::StrCat("configuration manager ", config.manager_id(), " is not a member"));
  }
  if (clients.contains(config.manager_id())) {
    return absl::InvalidArgumentError(
        absl::StrCat("configuration manager ", config.manager_id(), " is a client-only member"));
  }
  absl::flat_hash_set<uint32_t> regions;
  for (const RegionPlacement& r : config.regions()) {
    const std::string name = absl::StrCat("region ", r.region_id());
    if (r.region_id() == 0) return absl::InvalidArgumentError("region id 0");
    // A member's own region (node id << 16 | index), or one AllocateRegion numbered from 1.
    const bool node_region = memory::OwnerOfRegion(r.region_id()) != 0;
    if (!node_region && r.region_id() >= config.next_region_id()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " is not below next_region_id ", config.next_region_id()));
    }
    if (!regions.insert(r.region_id()).second) return absl::InvalidArgumentError(absl::StrCat("duplicate ", name));
    if (r.size_bytes() == 0) return absl::InvalidArgumentError(absl::StrCat(name, " has size 0"));
    std::set<uint32_t> replicas;
    std::vector<uint32_t> all = {r.primary()};
    all.insert(all.end(), r.backups().begin(), r.backups().end());
    if (node_region && r.backups_size() > static_cast<int>(config.backups_per_region())) {
      return absl::InvalidArgumentError(absl::StrCat(name, " has ", r.backups_size(), " backups; the cluster keeps ",
                                                     config.backups_per_region()));
    }
    for (uint32_t node : r.filling()) {
      if (std::find(r.backups().begin(), r.backups().end(), node) == r.backups().end()) {
        return absl::InvalidArgumentError(absl::StrCat(name, " fills node ", node, ", which is not its backup"));
      }
    }
    for (uint32_t node : all) {
      // A replica whose node left stays listed (only recovery replaces it): any node id, member or not.
      if (node == 0 || node > kMaxNodeId) {
        return absl::InvalidArgumentError(absl::StrCat(name, " has a replica on node ", node));
      }
      if (!replicas.insert(node).second) {
        return absl::InvalidArgumentError(absl::StrCat(name, " has two replicas on node ", node));
      }
      if (clients.contains(node)) {
        return absl::InvalidArgumentError(absl::StrCat(name, " has a replica on client-only member ", node));
      }
    }
  }
  for (uint32_t lost : config.lost_regions()) {
    if (regions.contains(lost)) return absl::InvalidArgumentError(absl::StrCat("region ", lost, " is both lost and placed"));
  }
  absl::flat_hash_set<std::string> tables;
  for (const TableDescriptor& t : config.tables()) {
    if (t.name().empty()) return absl::InvalidArgumentError("table with an empty name");
    if (!tables.insert(t.name()).second) return absl::InvalidArgumentError(absl::StrCat("duplicate table ", t.name()));
    // Region-map ids count up from 1; a node's own regions are node id << 16 | index (not tied to the
    // member list, so a member leaving never makes the configuration invalid).
    const bool node_region = memory::OwnerOfRegion(t.root_region()) != 0;
    if (t.root_region() != 0 && !regions.contains(t.root_region()) && !node_region) {
      return absl::InvalidArgumentError(
          absl::StrCat("table ", t.name(), " has its root in unknown region ", t.root_region()));
    }
  }
  return absl::OkStatus();
}

std::string EncodeConfiguration(const Configuration& config) {
  std::string payload;
  config.SerializeToString(&payload);
  std::string out(kHeaderBytes, '\0');
  std::memcpy(out.data(), kMagic, 4);
  PutLe(kFormatVersion, 2, out.data() + 4);
  PutLe(XXH64(payload.data(), payload.size(), 0), 8, out.data() + 8);
  out += payload;
  return out;
}

absl::StatusOr<Configuration> DecodeConfiguration(std::string_view bytes) {
  if (bytes.size() < kHeaderBytes) {
    return absl::DataLossError(absl::StrCat("configuration is ", bytes.size(), " bytes, shorter than its header"));
  }
  if (std::memcmp(bytes.data(), kMagic, 4) != 0) return absl::DataLossError("configuration has a bad magic");
  const uint64_t version = GetLe(bytes.data() + 4, 2);
  if (version != kFormatVersion) {
    return absl::DataLossError(absl::StrCat("configuration format version ", version, " is not ", kFormatVersion));
  }
  if (GetLe(bytes.data() + 6, 2) != 0) return absl::DataLossError("configuration header's reserved bytes are not 0");
  std::string_view payload = bytes.substr(kHeaderBytes);
  if (XXH64(payload.data(), payload.size(), 0) != GetLe(bytes.data() + 8, 8)) {
    return absl::DataLossError(absl::StrCat("configuration checksum mismatch (", payload.size(),
                                            " payload bytes: truncated or corrupted)"));
  }
  Configuration config;
  if (!config.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return absl::DataLossError("configuration payload is not a Configuration protobuf");
  }
  if (absl::Status s = ValidateConfiguration(config); !s.ok()) {
    return absl::DataLossError(absl::StrCat("stored configuration is invalid: ", s.message()));
  }
  return config;
}

void Canonicalize(Configuration* config) {
  auto* members = config->mutable_members();
  std::sort(members->begin(), members->end(),
            [](const MemberInfo& a, const MemberInfo& b) { return a.node_id() < b.node_id(); });
  auto* regions = config->mutable_regions();
  std::sort(regions->begin(), regions->end(),
            [](const RegionPlacement& a, const RegionPlacement& b) { return a.region_id() < b.region_id(); });
}

std::vector<uint32_t> DataMemberIds(const Configuration& config) {
  std::vector<uint32_t> ids;
  for (const MemberInfo& m : config.members()) {
    if (!m.client_only()) ids.push_back(m.node_id());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

const MemberInfo* FindMember(const Configuration& config, uint32_t node_id) {
  for (const MemberInfo& m : config.members()) {
    if (m.node_id() == node_id) return &m;
  }
  return nullptr;
}

bool ListsRegistration(const MemberInfo& listed, const MemberInfo& registered) {
  MemberInfo a = listed;
  MemberInfo b = registered;
  a.clear_joined_epoch();
  b.clear_joined_epoch();
  a.clear_starts_empty();  // said of the first admission only (ZooKeeperCoordinator::Join)
  b.clear_starts_empty();
  return a.SerializeAsString() == b.SerializeAsString();
}

const RegionPlacement* FindRegion(const Configuration& config, uint32_t region_id) {
  for (const RegionPlacement& r : config.regions()) {
    if (r.region_id() == region_id) return &r;
  }
  return nullptr;
}

bool RemoveMember(Configuration* config, uint32_t node_id) {
  // Regions keep their replicas on `node_id` (DropReplicasOf moves them, for a failure recovery handles).
  bool changed = false;
  auto* members = config->mutable_members();
  for (int i = 0; i < members->size(); ++i) {
    if (members->Get(i).node_id() == node_id) {
      members->DeleteSubrange(i, 1);
      changed = true;
      break;
    }
  }
  if (config->manager_id() == node_id) {
    config->set_manager_id(0);
    changed = true;
  }
  return changed;
}

std::string Summary(const Configuration& config) {
  std::vector<uint32_t> ids;
  for (const MemberInfo& m : config.members()) ids.push_back(m.node_id());
  return absl::StrCat("epoch ", config.epoch(), ", cm ", config.manager_id(), ", members [", absl::StrJoin(ids, " "),
                      "], ", config.regions_size(), " regions, ", config.tables_size(), " tables");
}

}  // namespace fathom::coordinator
