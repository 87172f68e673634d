// Promotion: a backup that recovery made a region's primary (coordinator::DropReplicasOf) serves its copy
// of the region as the region itself, once its copy holds every committed write.
//
// The copy has every truncated commit applied. A COMMIT-BACKUP record still pending here belongs to a
// transaction whose coordinator has not decided yet, or decided and has not told this node: it truncates
// (the copy installs the writes) or aborts (the record goes). Until none is left the region is not served,
// so no new transaction can lock an object that a pending commit will still write.
//
// As it serves the copy, the node rebuilds its allocator state from the copy's object headers (the dead
// primary's free lists are gone, as in FaRM §5.3): the slab of every slot with a header is claimed, so it
// is never carved again and objects in it can be freed; a freed slot goes on a free list; slabs with no
// slot at all become free to carve (Node::ServeRegion).
#include <algorithm>
#include <cstdio>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "platform/base/log.h"
#include "platform/object/local_object.h"
#include "txn/shared.h"
#include "txn/slot_walk.h"
#include "platform/base/status_macros.h"
#include "txn/txn.h"

namespace fathom::txn {
namespace {

// The slots of `copy` that hold objects, and of those the ones whose object was freed. Nothing was
// written past `end` (walking the empty rest of a 64 MiB copy took ~7 ms).
absl::Status FindSlots(const memory::LocalRegion& copy, uint64_t end, std::vector<memory::Slot>* used,
                       std::vector<memory::GlobalAddress>* freed) {
  return ForEachSlotBelow(copy, end, [&](uint32_t offset, uint32_t capacity) -> absl::Status {
    const memory::GlobalAddress address{copy.id(), offset};
    used->push_back(memory::Slot{address, capacity});
    const object::ObjectHeader header = object::LocalObject(copy.at(offset), capacity).ReadHeader();
    if (!header.live() && header.incarnation > 0) freed->push_back(address);
    return absl::OkStatus();
  });
}

}  // namespace

absl::Status TransactionService::PrepareBackupCopies() {
  node::Node& node = *shared_->node;
  const std::shared_ptr<const memory::RegionMap> map = node.region_directory().Current();
  for (uint32_t region : map->BackupRegionsOf(node.id())) {
    absl::StatusOr<memory::RegionReplicas> replicas = map->ReplicasOf(region);
    if (!replicas.ok()) return replicas.status();
    if (replicas->bytes == 0) continue;  // a configuration without sizes (static clusters' rule)
    if (absl::StatusOr<memory::LocalRegion*> copy = shared_->backups.Registered(region, replicas->bytes); !copy.ok()) {
      return copy.status();
    }
  }
  return absl::OkStatus();
}

std::vector<uint32_t> TransactionService::promotions_waiting() const {
  node::Node& node = *shared_->node;
  std::vector<uint32_t> waiting;
  for (uint32_t region : node.region_directory().Current()->PrimaryRegionsOf(node.id())) {
    if (node.ServedRegion(region) == nullptr) waiting.push_back(region);  // neither its own nor promoted yet
  }
  return waiting;
}

absl::StatusOr<size_t> TransactionService::ForgetParticipationAfterRemoval() {
  return SumOverThreads([](TxnThread& t) { return t.ForgetAfterRemoval(); });
}

absl::StatusOr<std::vector<uint32_t>> TransactionService::ServePromotedRegions(const std::vector<uint32_t>& members,
                                                                                 std::string* waiting_for) {
  node::Node& node = *shared_->node;
  std::vector<uint32_t> others;
  for (uint32_t member : members) {
    if (member != node.id()) others.push_back(member);
  }
  const std::shared_ptr<const memory::RegionMap> map = node.region_directory().Current();
  const std::vector<uint32_t> waiting = promotions_waiting();
  std::vector<uint32_t> served;
  for (uint32_t region : waiting) {
    absl::StatusOr<memory::RegionReplicas> replicas = map->ReplicasOf(region);
    if (!replicas.ok()) return replicas.status();
    if (replicas->bytes == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("configuration ", map->epoch(), " gives no size for region ", region));
    }
    uint64_t since = 0;
    {
      absl::MutexLock lock(&shared_->promotions_mu);
      since = shared_->promoted_in.try_emplace(region, map->epoch()).first->second;
    }
    // No peer connects from now on unless it works from `since` or later; one joining now may not, so
    // it is asked again.
    if (!node.RaiseEpochFloor(since)) {
      if (waiting_for != nullptr) {
        absl::StrAppend(waiting_for, waiting_for->empty() ? "" : "; ", "region ", region, ": a join is under way");
      }
      continue;
    }
    // Per thread, in one task: first every connected peer's and every member's CONFIG-APPLIED of `since`
    // (so every COMMIT-BACKUP planned under an older map is handled, and none can come: a member whose
    // connection dropped sends what the drop discarded ahead of it: node/config_applied.h), then no
    // record of the region pending.
    std::set<uint32_t> behind;
    absl::StatusOr<size_t> pending = SumOverThreads([&](TxnThread& t) -> size_t {
      const std::vector<uint32_t> late = t.thread().PeersBehind(since, others);
      behind.insert(late.begin(), late.end());
      return late.empty() ? t.participant().BackupRecordsFor(region) : 0;
    });
    if (!pending.ok()) return pending.status();
    if (!behind.empty() || *pending > 0) {  // asked again on the next configuration or retry
      if (waiting_for != nullptr) {
        absl::StrAppend(waiting_for, waiting_for->empty() ? "" : "; ", "region ", region, ": ",
                        behind.empty() ? absl::StrCat(*pending, " COMMIT-BACKUP records pending")
                                       : absl::StrCat("node(s) ", absl::StrJoin(behind, ","),
                                                      " not yet connected and working from configuration ",
                                                      since));
      }
      continue;
    }
    absl::StatusOr<memory::LocalRegion*> copy = shared_->backups.Registered(region, replicas->bytes);
    if (!copy.ok()) return copy.status();
    std::vector<memory::Slot> used;
    std::vector<memory::GlobalAddress> freed;
    RETURN_IF_ERROR(FindSlots(**copy, shared_->backups.WrittenEnd(region), &used, &freed));
    if (absl::Status s = node.ServeRegion(*copy, used); !s.ok()) return s;
    // The freed slots go on thread 0's free list (the allocator state the dead primary's lists held).
    absl::Status listed = node.RunOnThread(0, [&freed](node::NodeThread& thread) -> absl::Status {
      for (const memory::GlobalAddress& address : freed) RETURN_IF_ERROR(thread.allocator().Free(address));
      return absl::OkStatus();
    });
    if (!listed.ok()) {  // served anyway: those slots are only lost to allocation
      LogError("txn", "node %u listing the %zu freed slots of promoted region %u: %s", node.id(), freed.size(),
              region, listed.ToString().c_str());
    }
    served.push_back(region);
  }
  absl::MutexLock lock(&shared_->promotions_mu);
  for (auto it = shared_->promoted_in.begin(); it != shared_->promoted_in.end();) {
    const bool done = std::find(waiting.begin(), waiting.end(), it->first) == waiting.end() ||
                      std::find(served.begin(), served.end(), it->first) != served.end();
    if (done) {
      shared_->promoted_in.erase(it++);
    } else {
      ++it;
    }
  }
  return served;
}

}  // namespace fathom::txn
