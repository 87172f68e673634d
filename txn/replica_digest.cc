// Replica digests: what a node holds of each region, as one number, so a tool can check that a region's
// primary and backups agree (fathomctl replicas; docs/formats/control.md, ReplicaDigest).
#include <xxhash.h>

#include <string>

#include "platform/base/byte_order.h"
#include "platform/base/status_macros.h"
#include "txn/shared.h"
#include "txn/slot_walk.h"
#include "txn/txn.h"

namespace fathom::txn {
namespace {

// XXH64 over every object in address order: offset, capacity, incarnation, live or freed, version, payload.
absl::StatusOr<TransactionService::ReplicaDigest> Digest(const memory::LocalRegion& memory) {
  TransactionService::ReplicaDigest result;
  XXH64_hash_t digest = 0;
  std::vector<std::byte> buffer;
  std::string bytes;
  RETURN_IF_ERROR(ForEachSlot(memory, [&](uint32_t offset, uint32_t capacity) -> absl::Status {
    ASSIGN_OR_RETURN(std::optional<WriteEntry> entry, CopySlot(memory, offset, capacity, buffer));
    if (!entry.has_value()) return absl::OkStatus();
    bytes.clear();
    AppendU32(bytes, offset);
    AppendU32(bytes, capacity);
    AppendU32(bytes, entry->ref.incarnation);
    bytes.push_back(static_cast<char>(entry->op));
    AppendU64(bytes, entry->version);
    bytes += entry->payload;
    digest = XXH64(bytes.data(), bytes.size(), digest);
    ++result.objects;
    return absl::OkStatus();
  }));
  result.digest = digest;
  return result;
}

}  // namespace

absl::StatusOr<std::vector<TransactionService::ReplicaDigest>> TransactionService::ReplicaDigests() {
  node::Node& node = *shared_->node;
  const std::shared_ptr<const memory::RegionMap> map = node.region_directory().Current();
  std::vector<ReplicaDigest> digests;
  for (uint32_t region : map->PrimaryRegionsOf(node.id())) {
    const memory::LocalRegion* memory = node.ServedRegion(region);
    if (memory == nullptr) continue;  // a promotion not served yet: it holds a backup copy still
    ASSIGN_OR_RETURN(ReplicaDigest digest, Digest(*memory));
    digest.region = region;
    digest.primary = true;
    digests.push_back(digest);
  }
  for (uint32_t region : map->BackupRegionsOf(node.id())) {
    ASSIGN_OR_RETURN(memory::RegionReplicas replicas, map->ReplicasOf(region));
    if (replicas.bytes == 0) continue;  // a static cluster's map: sizes unknown
    ASSIGN_OR_RETURN(memory::LocalRegion * copy, shared_->backups.Registered(region, replicas.bytes));
    ASSIGN_OR_RETURN(ReplicaDigest digest, Digest(*copy));
    digest.region = region;
    digests.push_back(digest);
  }
  return digests;
}

}  // namespace fathom::txn
