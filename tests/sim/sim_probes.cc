#include "tests/sim/sim_probes.h"

#include <algorithm>
#include <map>
#include <span>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

std::string Unsettled(SimCluster& cluster) {
  const coordinator::Configuration now = cluster.configuration();
  for (uint32_t id : coordinator::DataMemberIds(now)) {
    if (cluster.stopped(id)) continue;
    if (cluster.applied_epoch(id) < now.epoch()) {
      return absl::StrCat("node ", id, " applied epoch ", cluster.applied_epoch(id), " of ", now.epoch());
    }
    // A member without a lease is about to be removed (the CM may be retrying the removal already).
    if (!cluster.lease(id).HoldsLease()) return absl::StrCat("node ", id, " holds no lease");
  }
  for (const coordinator::RegionPlacement& r : now.regions()) {
    if (r.filling_size() > 0) return absl::StrCat("region ", r.region_id(), " fills a new backup");
    // A promoted primary serves its region once no commit planned under an older map can reach it.
    if (!cluster.stopped(r.primary()) && cluster.node(r.primary()).ServedRegion(r.region_id()) == nullptr) {
      return absl::StrCat("node ", r.primary(), " does not serve region ", r.region_id(), " yet (epoch ", now.epoch(),
                          ")");
    }
  }
  return "";
}

bool Settled(SimCluster& cluster) { return Unsettled(cluster).empty(); }

std::vector<uint32_t> Managers(SimCluster& cluster) {
  std::vector<uint32_t> managers;
  for (int i = 1; i <= cluster.size(); ++i) {
    const uint32_t id = static_cast<uint32_t>(i);
    if (cluster.stopped(id) || cluster.paused(id)) continue;  // takes no step
    if (cluster.lease(id).GrantsLeases()) managers.push_back(id);
  }
  return managers;
}

absl::Status RunUntilWithOneManager(SimCluster& cluster, const std::function<bool()>& done, absl::Duration timeout) {
  std::string split;
  uint64_t recorded = 0;
  const bool reached = cluster.scheduler().RunUntil(
      [&] {
        if (const coordinator::Configuration now = cluster.configuration(); now.epoch() != recorded) {
          recorded = now.epoch();
          cluster.Record(absl::StrCat("epoch ", now.epoch(), ", cm ", now.manager_id(), ", members ",
                                      absl::StrJoin(coordinator::DataMemberIds(now), ",")));
        }
        if (const std::vector<uint32_t> managers = Managers(cluster); managers.size() > 1) {
          split = absl::StrCat("two managers at once: nodes ", absl::StrJoin(managers, ", "), " at ",
                               absl::FormatTime(cluster.network().clock().Now()));
          return true;
        }
        return done();
      },
      timeout);
  if (!split.empty()) return absl::InternalError(split);
  if (!reached) return absl::DeadlineExceededError(absl::StrCat("not reached within ", absl::FormatDuration(timeout)));
  return absl::OkStatus();
}

absl::Status RunUntilSettled(SimCluster& cluster, absl::Duration timeout, const std::function<bool()>& also) {
  const absl::Duration stable = 2 * cluster.options().lease_period;
  absl::Time since = absl::InfiniteFuture();  // settled since (InfiniteFuture: not now)
  return RunUntilWithOneManager(
      cluster,
      [&] {
        if ((also != nullptr && !also()) || !Settled(cluster)) {
          since = absl::InfiniteFuture();
          return false;
        }
        const absl::Time now = cluster.network().clock().Now();
        if (since == absl::InfiniteFuture()) since = now;
        return now - since >= stable;
      },
      timeout);
}

absl::Status IdenticalReplicasOnceSettled(SimCluster& cluster) {
  if (absl::Status s = RunUntilSettled(cluster, absl::Seconds(10)); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("settling: ", s.message()));
  }
  cluster.scheduler().RunFor(absl::Milliseconds(20));  // truncations reach the backups
  const std::vector<std::string> differences = ReplicaDifferences(cluster);
  if (differences.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("replicas differ:\n", absl::StrJoin(differences, "\n")));
}

}  // namespace fathom::sim
