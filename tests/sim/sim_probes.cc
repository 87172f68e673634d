#include "tests/sim/sim_probes.h"

#include <algorithm>
#include <map>
#include <span>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "platform/object/object_codec.h"
#include "platform/object/object_layout.h"
#include "platform/memory/global_address.h"

namespace fathom::sim {
namespace {

// The objects in a region's bytes by offset: "capacity incarnation live version payload" (a slot is where
// a header gives a capacity, as in txn/slot_walk.h).
std::map<uint64_t, std::string> Objects(std::span<const std::byte> bytes) {
  std::map<uint64_t, std::string> objects;
  uint64_t offset = 0;
  while (offset + object::kHeaderBytes <= bytes.size()) {
    const object::ObjectHeader header = object::DecodeHeader(bytes.subspan(offset, object::kHeaderBytes));
    if (header.capacity < 64 || header.capacity % 64 != 0 || offset + header.capacity > bytes.size()) {
      offset += 64;
      continue;
    }
    const size_t length = std::min<size_t>(header.payload_length, header.capacity - object::kHeaderBytes);
    const auto payload = bytes.subspan(offset + object::kHeaderBytes, header.live() ? length : 0);
    objects[offset] = absl::StrCat(header.capacity, " i", header.incarnation, header.live() ? " live" : " free", " v",
                                   header.version(), " ",
                                   absl::CHexEscape(absl::string_view(reinterpret_cast<const char*>(payload.data()),
                                                                     payload.size())));
    offset += header.capacity;
  }
  return objects;
}

}  // namespace

std::vector<std::string> ReplicaDifferences(SimCluster& cluster) {
  std::vector<std::string> differences;
  const coordinator::Configuration configuration = cluster.configuration();  // kept: regions() refers into it
  for (const coordinator::RegionPlacement& r : configuration.regions()) {
    const memory::LocalRegion* served = cluster.node(r.primary()).ServedRegion(r.region_id());
    if (served == nullptr) {
      differences.push_back(absl::StrCat("region ", r.region_id(), ": node ", r.primary(), " does not serve it"));
      continue;
    }
    const auto primary = Objects(std::span<const std::byte>(served->at(0), served->size()));
    for (uint32_t backup : r.backups()) {
      if (std::find(r.filling().begin(), r.filling().end(), backup) != r.filling().end()) continue;
      const auto copy = Objects(cluster.txns(backup).backups().View(r.region_id()));
      for (const auto& [offset, state] : primary) {
        auto it = copy.find(offset);
        if (it == copy.end() || it->second != state) {
          differences.push_back(absl::StrCat("region ", r.region_id(), " +", offset, ": primary ", r.primary(), " has ",
                                             state, "; backup ", backup, " has ",
                                             it == copy.end() ? "nothing" : it->second));
        }
      }
      for (const auto& [offset, state] : copy) {
        if (!primary.contains(offset)) {
          differences.push_back(absl::StrCat("region ", r.region_id(), " +", offset, ": backup ", backup, " has ", state,
                                             "; primary ", r.primary(), " nothing"));
        }
      }
    }
  }
  return differences;
}

absl::StatusOr<uint32_t> BackupOfOwnRegion(const coordinator::Configuration& configuration, uint32_t owner) {
  for (const coordinator::RegionPlacement& r : configuration.regions()) {
    if (memory::OwnerOfRegion(r.region_id()) != owner) continue;
    if (r.primary() == owner && r.backups_size() == 1 && r.backups(0) != owner) return r.backups(0);
    break;
  }
  return absl::FailedPreconditionError(absl::StrCat("node ", owner, "'s region has no single backup elsewhere"));
}

std::string BackupCopyOf(SimCluster& cluster, uint32_t node, const object::ObjectRef& ref) {
  auto copy = cluster.txns(node).backups().View(ref.address.region);
  if (copy.size() < uint64_t{ref.address.offset} + ref.capacity) return "";
  return std::string(reinterpret_cast<const char*>(copy.data()) + ref.address.offset, ref.capacity);
}

absl::StatusOr<object::ObjectRef> CommitNewObject(SimCluster& cluster, uint32_t coordinator, uint32_t on_node,
                                                  std::string_view value) {
  txn::Transaction tx = cluster.txns(coordinator).Begin(0);
  absl::StatusOr<object::ObjectRef> ref = tx.Alloc(16, txn::AllocHint{.node = on_node});
  if (!ref.ok()) return ref.status();
  if (absl::Status s = tx.Write(*ref, value); !s.ok()) return s;
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return ref;
}

uint64_t SumOverThreads(SimCluster& cluster, uint32_t node, const std::function<uint64_t(txn::TxnThread&)>& of) {
  uint64_t total = 0;
  for (int t = 0; t < cluster.node(node).threads(); ++t) {
    auto thread = cluster.txns(node).Thread(t);
    if (thread.ok()) total += of(**thread);
  }
  return total;
}

}  // namespace fathom::sim
