#include "logging/restore.h"

#include <span>

#include "absl/strings/str_cat.h"
#include "platform/object/local_object.h"
#include "platform/object/object_layout.h"
#include "txn/records.h"

namespace fathom::logging {

ClusterImage MergeLogs(const std::vector<LogContents>& logs) {
  ClusterImage image;
  image.log_epoch = logs.empty() ? 0 : UINT64_MAX;
  for (const LogContents& log : logs) image.log_epoch = std::min(image.log_epoch, log.closed_epoch);
  for (const LogContents& log : logs) {
    // Ids of dropped states count too: new transaction ids must not repeat any logged one.
    for (const ObjectState& state : log.states) image.max_epoch = std::max(image.max_epoch, state.txn_epoch);
    for (ObjectState& state : NewestStates(log, image.log_epoch)) {
      if (state.role == Role::kBackup) image.backup_regions[log.node_id].insert(state.address.region);
      auto [it, inserted] = image.newest.try_emplace(state.address.raw(), state);
      if (!inserted && it->second.version < state.version) it->second = std::move(state);
    }
  }
  return image;
}

absl::StatusOr<size_t> RestorePrimaries(node::Node& node, const ClusterImage& image) {
  std::map<uint32_t, memory::LocalRegion*> regions;
  for (memory::LocalRegion* region : node.data_regions()) regions[region->id()] = region;
  size_t restored = 0;
  absl::Status status = node.RunOnThread(0, [&](node::NodeThread& thread) -> absl::Status {
    for (const auto& [raw, state] : image.newest) {
      auto region = regions.find(state.address.region);
      if (region == regions.end()) continue;
      if (uint64_t{state.address.offset} + state.capacity > region->second->size() ||
          state.capacity < object::kHeaderBytes + state.payload.size()) {
        return absl::InvalidArgumentError(absl::StrCat("node ", node.id(), ": logged object ",
                                                       state.address.ToString(), " of ", state.capacity,
                                                       " bytes does not fit region ", region->first));
      }
      // Claim first: it checks the slot is a slot (size class, alignment) before anything is written.
      if (absl::Status s = thread.allocator().Claim(state.address, state.capacity); !s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", node.id(), ": logged object ", state.address.ToString(), ": ", s.message()));
      }
      object::LocalObject object(region->second->at(state.address.offset), state.capacity);
      auto locked = object.Lock(/*max_attempts=*/1);
      if (!locked.ok()) return locked.status();
      object.InstallAtVersionAndUnlock(state.version, std::as_bytes(std::span(state.payload)), state.incarnation,
                                       state.flags);
      if (!state.live()) {
        if (absl::Status s = thread.allocator().Free(state.address); !s.ok()) return s;
      }
      ++restored;
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return restored;
}

absl::StatusOr<size_t> RestoreBackups(txn::BackupStore& backups, const ClusterImage& image,
                                      const std::set<uint32_t>& regions,
                                      const std::function<uint64_t(uint32_t region)>& region_bytes) {
  size_t restored = 0;
  for (const auto& [raw, state] : image.newest) {
    if (!regions.contains(state.address.region)) continue;
    // BackupStore installs entries: a free entry of incarnation i leaves a free slot of incarnation i + 1.
    txn::WriteEntry entry;
    entry.op = state.live() ? txn::WriteOp::kWrite : txn::WriteOp::kFree;
    if (!state.live() && state.incarnation == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("logged free slot ", state.address.ToString(), " has incarnation 0"));
    }
    entry.ref = {state.address, state.live() ? state.incarnation : state.incarnation - 1, state.capacity};
    entry.version = state.version;
    entry.payload = state.payload;
    auto changed = backups.Apply(entry, region_bytes(state.address.region));
    if (!changed.ok()) {
      return absl::Status(changed.status().code(), absl::StrCat("backup of ", state.address.ToString(), ": ",
                                                                changed.status().message()));
    }
    ++restored;
  }
  return restored;
}

}  // namespace fathom::logging
