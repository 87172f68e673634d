// Data recovery: a region that lost a replica gets a new backup (coordinator::AddFillingBackups), which
// takes new commits at once and receives the rest from the region's primary here, object by object.
//
// The primary walks its memory of the region slot by slot (each object's header gives its slot size;
// never-used slots are zero), takes a consistent copy of each object (checksum, unlocked) and sends the
// states to the new backup in FILL records; the backup installs each only if it is newer than what its
// copy holds, exactly as at truncation, so the copy and the commits that reach it meanwhile (as
// COMMIT-BACKUP, by version) can arrive in any order. It starts once no transaction of an older
// configuration holds locks on the region here: those were planned without the new backup, and the walk
// must see what they install.
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "platform/memory/global_address.h"
#include "platform/object/local_object.h"
#include "platform/base/status_macros.h"
#include "platform/object/object_codec.h"
#include "txn/shared.h"
#include "txn/slot_walk.h"
#include "txn/txn.h"

namespace fathom::txn {
namespace {

// A FILL record's entries stay under this many bytes (a ring message holds a quarter ring: 16 KiB by
// default); one larger object goes alone.
constexpr size_t kFillRecordBytes = 8 << 10;
// Copies every object of `memory` to `backup`, in FILL records of configuration `epoch`.
absl::Status CopyRegion(node::Node& node, const memory::LocalRegion& memory, uint32_t backup, uint64_t epoch) {
  std::vector<WriteEntry> batch;
  size_t batch_bytes = 0;
  auto send = [&]() -> absl::Status {
    if (batch.empty()) return absl::OkStatus();
    Record record;
    record.kind = RecordKind::kCommitBackup;
    record.id = TxnId{epoch, node.id(), 0, 0};
    record.entries = std::move(batch);
    record.written_regions = {memory.id()};
    batch.clear();
    batch_bytes = 0;
    absl::StatusOr<std::string> reply = node.Call(backup, kFillMessage, EncodeRecord(record), /*thread=*/0);
    if (!reply.ok()) {
      return absl::Status(reply.status().code(),
                          absl::StrCat("filling node ", backup, "'s copy of region ", memory.id(), ": ",
                                       reply.status().message()));
    }
    return absl::OkStatus();
  };
  std::vector<std::byte> buffer;
  RETURN_IF_ERROR(ForEachSlot(memory, [&](uint32_t offset, uint32_t capacity) -> absl::Status {
    absl::StatusOr<std::optional<WriteEntry>> entry = CopySlot(memory, offset, capacity, buffer);
    if (!entry.ok()) return entry.status();
    if (!entry->has_value()) return absl::OkStatus();
    const WriteEntry* one = &**entry;
    const size_t bytes = RecordSize(0, {&one, 1}, 1);
    if (batch_bytes + bytes > kFillRecordBytes) RETURN_IF_ERROR(send());
    batch.push_back(std::move(**entry));
    batch_bytes += bytes;
    return absl::OkStatus();
  }));
  return send();
}

}  // namespace

absl::Status TxnThread::OnFill(const msg::Message& message, std::string* reply) {
  if (reply == nullptr) return absl::InvalidArgumentError("a fill record is a request");
  absl::StatusOr<Record> record = DecodeRecord(message.payload);
  if (!record.ok()) return record.status();
  if (record->kind != RecordKind::kCommitBackup || record->id.node != message.peer || !record->truncated.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("a fill record from node ", message.peer, " must be its own ",
                                                   "commit-backup-shaped record with no truncations"));
  }
  // Only the region's primary fills, and only a backup the map says is filling: one that has not seen
  // the configuration yet says so, and the primary tries again.
  for (const WriteEntry& entry : record->entries) {
    const uint32_t region = entry.ref.address.region;
    absl::StatusOr<memory::RegionReplicas> replicas = this->replicas().ReplicasOf(region);
    if (!replicas.ok() || replicas->primary != message.peer ||
        std::find(replicas->filling.begin(), replicas->filling.end(), node_id_) == replicas->filling.end()) {
      return absl::FailedPreconditionError(absl::StrCat("node ", node_id_, " is not filling region ", region,
                                                        " from node ", message.peer, " in configuration ",
                                                        this->replicas().epoch()));
    }
  }
  return participant_.ApplyFill(*record);
}

bool TransactionService::fills_waiting() const {
  node::Node& node = *shared_->node;
  const std::shared_ptr<const memory::RegionMap> map = node.region_directory().Current();
  for (uint32_t region : map->PrimaryRegionsOf(node.id())) {
    absl::StatusOr<memory::RegionReplicas> replicas = map->ReplicasOf(region);
    if (replicas.ok() && !replicas->filling.empty()) return true;
  }
  return false;
}

absl::StatusOr<std::vector<TransactionService::Filled>> TransactionService::FillBackups() {
  node::Node& node = *shared_->node;
  const std::shared_ptr<const memory::RegionMap> map = node.region_directory().Current();
  std::vector<Filled> filled;
  for (uint32_t region : map->PrimaryRegionsOf(node.id())) {
    absl::StatusOr<memory::RegionReplicas> replicas = map->ReplicasOf(region);
    if (!replicas.ok() || replicas->filling.empty()) continue;
    const memory::LocalRegion* memory = node.ServedRegion(region);
    if (memory == nullptr) continue;  // a promotion not served yet
    absl::StatusOr<size_t> older = SumOverThreads(
        [region, epoch = map->epoch()](TxnThread& t) { return t.participant().OlderLocksOn(region, epoch); });
    if (!older.ok()) return older.status();
    if (*older > 0) continue;  // asked again on the next retry
    for (uint32_t backup : replicas->filling) {
      if (absl::Status s = CopyRegion(node, *memory, backup, map->epoch()); !s.ok()) return s;
      filled.push_back({region, backup});
    }
  }
  return filled;
}

}  // namespace fathom::txn
