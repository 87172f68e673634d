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
//
// The copy is paced (TxnOptions::fill_bytes_per_second): each call of FillBackups sends what the rate
// allowed since the last one, and the walk resumes where the backup last acknowledged, so the follower
// that calls it is never held up for long and the foreground keeps most of the machine. Objects the walk
// passed that change later reach the backup as commits; a backup that restarted starts again from 0.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "platform/memory/global_address.h"
#include "platform/msg/ring_layout.h"
#include "platform/object/local_object.h"
#include "platform/base/status_macros.h"
#include "platform/object/object_codec.h"
#include "txn/shared.h"
#include "txn/slot_walk.h"
#include "txn/txn.h"

namespace fathom::txn {
namespace {

// A FILL record's entries stay under this many bytes, and under half of what a ring message holds (a
// quarter ring: 16 KiB by default, 4 KiB in the simulation); one larger object goes alone.
constexpr size_t kFillRecordBytes = 8 << 10;
size_t FillRecordBytes(const node::Node& node) {
  return std::min<size_t>(kFillRecordBytes, msg::RingGeometry::DefaultMaxPayload(node.options().ring_bytes) / 2);
}
// A paced copy may catch up on at most this much of its rate after a pause (the follower calls
// FillBackups every retry interval, up to 200 ms apart).
constexpr absl::Duration kFillBurst = absl::Milliseconds(250);
// The bytes `rate` (per second) allows in `elapsed`, at most a burst's worth (so an infinite gap is fine).
int64_t BytesAllowed(uint64_t rate, absl::Duration elapsed) {
  const double seconds = absl::ToDoubleSeconds(std::min(elapsed, kFillBurst));
  return static_cast<int64_t>(static_cast<double>(rate) * seconds);
}

// Copies the objects of `memory` from `*cursor` on to `backup`, in FILL records of configuration `epoch`;
// `*cursor` moves past every slot the backup acknowledged. With `allowance`, stops once that many bytes
// are spent (it goes below zero by at most one record). Returns whether the copy reached the end.
absl::StatusOr<bool> CopyRegion(node::Node& node, const memory::LocalRegion& memory, uint32_t backup, uint64_t epoch,
                                uint64_t* cursor, int64_t* allowance) {
  std::vector<WriteEntry> batch;
  size_t batch_bytes = 0;
  uint64_t batch_end = *cursor;  // the end of the last slot visited
  auto send = [&]() -> absl::Status {
    if (!batch.empty()) {
      Record record;
      record.kind = RecordKind::kCommitBackup;
      record.id = TxnId{epoch, node.id(), 0, 0};
      record.entries = std::move(batch);
      record.written_regions = {memory.id()};
      batch.clear();
      batch_bytes = 0;
      const std::string bytes = EncodeRecord(record);
      absl::StatusOr<std::string> reply = node.Call(backup, kFillMessage, bytes, /*thread=*/0);
      if (!reply.ok()) {
        return absl::Status(reply.status().code(),
                            absl::StrCat("filling node ", backup, "'s copy of region ", memory.id(), ": ",
                                         reply.status().message()));
      }
      if (allowance != nullptr) *allowance -= static_cast<int64_t>(bytes.size());
    }
    *cursor = batch_end;
    return absl::OkStatus();
  };
  const size_t record_bytes = FillRecordBytes(node);
  std::vector<std::byte> buffer;
  absl::StatusOr<uint64_t> stopped = WalkSlotsFrom(
      memory, *cursor, memory.size(), [&](uint32_t offset, uint32_t capacity) -> absl::StatusOr<bool> {
        if (allowance != nullptr && *allowance <= 0) return false;
        absl::StatusOr<std::optional<WriteEntry>> entry = CopySlot(memory, offset, capacity, buffer);
        if (!entry.ok()) return entry.status();
        if (entry->has_value()) {
          const WriteEntry* one = &**entry;
          const size_t bytes = RecordSize(0, {&one, 1}, 1);
          if (batch_bytes + bytes > record_bytes) RETURN_IF_ERROR(send());
          batch.push_back(std::move(**entry));
          batch_bytes += bytes;
        }
        batch_end = static_cast<uint64_t>(offset) + capacity;
        return true;
      });
  if (!stopped.ok()) return stopped.status();
  RETURN_IF_ERROR(send());
  if (*stopped < memory.size()) return false;
  *cursor = memory.size();
  return true;
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
  const std::map<uint32_t, uint64_t> incarnations = node.connected_incarnations();
  const uint64_t rate = shared_->options.fill_bytes_per_second;
  std::vector<Filled> filled;
  absl::MutexLock lock(&shared_->fills_mu);
  if (rate > 0) {
    // The allowance grows with the time since the last pass (the first pass: a full burst).
    const absl::Time now = node.options().clock->Now();
    shared_->fill_allowance = std::min(BytesAllowed(rate, kFillBurst),
                                       shared_->fill_allowance + BytesAllowed(rate, now - shared_->fill_allowance_at));
    shared_->fill_allowance_at = now;
  }
  int64_t* allowance = rate > 0 ? &shared_->fill_allowance : nullptr;
  std::set<std::pair<uint32_t, uint32_t>> wanted;
  for (uint32_t region : map->PrimaryRegionsOf(node.id())) {
    absl::StatusOr<memory::RegionReplicas> replicas = map->ReplicasOf(region);
    if (!replicas.ok() || replicas->filling.empty()) continue;
    const memory::LocalRegion* memory = node.ServedRegion(region);
    if (memory == nullptr) continue;  // a promotion not served yet
    std::optional<size_t> older;  // asked once per region, when a copy starts
    for (uint32_t backup : replicas->filling) {
      wanted.insert({region, backup});
      auto connected = incarnations.find(backup);
      if (connected == incarnations.end()) continue;  // not joined yet: a later pass
      Transaction::Shared::FillCursor& cursor = shared_->fill_cursors[{region, backup}];
      // A backup that restarted lost what an earlier process received.
      if (cursor.incarnation != connected->second) cursor = {connected->second, 0};
      if (cursor.offset == 0) {
        if (!older.has_value()) {
          absl::StatusOr<size_t> locks = SumOverThreads(
              [region, epoch = map->epoch()](TxnThread& t) { return t.participant().OlderLocksOn(region, epoch); });
          if (!locks.ok()) return locks.status();
          older = *locks;
        }
        if (*older > 0) continue;  // asked again on the next retry
      }
      if (allowance != nullptr && *allowance <= 0) continue;  // the pace: a later pass
      absl::StatusOr<bool> done = CopyRegion(node, *memory, backup, map->epoch(), &cursor.offset, allowance);
      if (!done.ok()) return done.status();  // resumes where the backup last acknowledged
      if (!*done) continue;
      filled.push_back({region, backup});
      // The caller marks it filled; should that fail, the next pass copies it again from the start.
      shared_->fill_cursors.erase({region, backup});
    }
  }
  // Copies no map asks for any more (marked filled, or the backup or the region moved) are forgotten.
  std::erase_if(shared_->fill_cursors, [&wanted](const auto& entry) { return !wanted.contains(entry.first); });
  return filled;
}

}  // namespace fathom::txn
