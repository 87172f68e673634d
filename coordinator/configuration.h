// The cluster configuration (configuration.proto): {epoch, members, configuration manager, region map,
// table descriptors}, its validation, and its framed serialization for ZooKeeper
// (docs/formats/configuration.md).
//
//   Configuration config;
//   config.set_epoch(1);
//   *config.add_members() = member;
//   RETURN_IF_ERROR(ValidateConfiguration(config));          // InvalidArgument names the problem
//   std::string bytes = EncodeConfiguration(config);          // what /fathom/<c>/config holds
//   ASSIGN_OR_RETURN(Configuration back, DecodeConfiguration(bytes));  // DataLoss if corrupt or invalid
#ifndef FATHOM_COORDINATOR_CONFIGURATION_H_
#define FATHOM_COORDINATOR_CONFIGURATION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/configuration.pb.h"

namespace fathom::coordinator {

inline constexpr uint32_t kMaxNodeId = 0xffff;
// ZooKeeper's default limit on a znode's data (jute.maxbuffer) is 1 MiB; we stay below it.
inline constexpr size_t kMaxEncodedConfigurationBytes = 1000 * 1000;

// A member's info on its own: node id in 1..kMaxNodeId, a control address, its regions its own ids (node id
// << 16 | index) with sizes in 1..4 GiB and none for a client-only member. InvalidArgument otherwise.
absl::Status ValidateMember(const MemberInfo& member);

// The whole configuration: valid, unique members; manager 0 or a member; regions with nonzero unique ids
// (a member's own, or below next_region_id), a positive size, replicas on distinct nodes that are not
// client-only members (a replica may be on a node that left: only recovery replaces it), at most
// backups_per_region backups for a member's region; tables with unique nonempty names whose root region
// (if any) is in the region map. InvalidArgument otherwise.
absl::Status ValidateConfiguration(const Configuration& config);

// The framed bytes (magic, format version, checksum, protobuf); see docs/formats/configuration.md.
std::string EncodeConfiguration(const Configuration& config);
// Checks the frame and the checksum, parses, validates. DataLoss says what is wrong.
absl::StatusOr<Configuration> DecodeConfiguration(std::string_view bytes);

// Members and regions in canonical order (by id), so equal configurations encode equally.
void Canonicalize(Configuration* config);

// The members that hold data and backups (every member but the client-only ones), sorted by id: the
// membership transactions replicate over.
std::vector<uint32_t> DataMemberIds(const Configuration& config);

const MemberInfo* FindMember(const Configuration& config, uint32_t node_id);
// Whether the configuration's entry `listed` is the member's registration `registered`: equal but for what
// the CM adds as it admits it (joined_epoch) and what only its first admission reads (starts_empty).
bool ListsRegistration(const MemberInfo& listed, const MemberInfo& registered);
const RegionPlacement* FindRegion(const Configuration& config, uint32_t region_id);

// Removes `node_id` from the members (and as manager). Its replicas stay listed: a member that leaves, or
// whose session or process ended without this cluster seeing it fail (a whole-cluster restart from the
// logs needs the placement it logged under), moves nothing. Returns whether anything changed.
bool RemoveMember(Configuration* config, uint32_t node_id);

// One line for logs: "epoch 7, cm 2, members [1 2 3], 4 regions, 1 table".
std::string Summary(const Configuration& config);

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_CONFIGURATION_H_
