// Commit: which replicas get which records, and the log room for them.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/memory/region_map.h"
#include "txn/commit.h"

namespace fathom::txn {
namespace {

CommitOperation::Replica& ReplicaFor(std::vector<CommitOperation::Replica>& replicas, uint32_t node, uint32_t self) {
  for (auto& r : replicas) {
    if (r.node == node) return r;
  }
  replicas.push_back({});
  replicas.back().node = node;
  replicas.back().local = node == self;
  return replicas.back();
}

}  // namespace

void CommitOperation::Start(TxnThread& thread, std::shared_ptr<TxState> tx, bool sync, DoneCallback done) {
  auto op = std::make_shared<CommitOperation>(thread, std::move(tx), sync, std::move(done));
  op->id_ = thread.NextId();
  op->started_ = thread.clock().Now();
  if (thread.options().lease_term) op->lease_term_ = thread.options().lease_term();
  if (op->tx_->writes.empty()) {
    thread.Settle(op->id_.counter);  // it writes no record anywhere
    return op->ValidateReadOnly();
  }
  if (absl::Status s = op->Plan(); !s.ok()) return op->AbortAll(s);
  if (absl::Status s = op->SetAsideLogRoom(); !s.ok()) return op->AbortAll(s);
  op->Lock();
}

absl::Status CommitOperation::Plan() {
  // One map for the whole plan (nothing below asks the thread for it again, so it stays current).
  const memory::RegionMap& map = thread_.replicas();
  plan_epoch_ = map.epoch();
  // The transaction is finished: its buffered payloads move into the records.
  for (auto& [address, write] : tx_->writes) {
    WriteEntry entry;
    entry.ref = write.ref;
    entry.op = write.op;
    entry.payload = std::move(write.payload);
    if (auto read = tx_->reads.find(address); read != tx_->reads.end()) {
      entry.check_version = true;
      entry.version = read->second.version;
    }
    const size_t index = writes_.size();
    writes_.push_back(std::move(entry));
    const uint32_t region = write.ref.address.region;
    // BackupsOf first: it is Unavailable unless the primary and every backup are members. A region the
    // map does not list is Unavailable too (Commit returns only what txn.h lists).
    auto backups = map.BackupsOf(region);
    auto primary = map.PrimaryOf(region);
    if (!backups.ok() || !primary.ok()) {
      const absl::Status why = backups.ok() ? primary.status() : backups.status();
      return absl::IsNotFound(why) ? absl::UnavailableError(why.message()) : why;
    }
    ReplicaFor(primaries_, *primary, thread_.node_id()).entries.push_back(index);
    for (uint32_t backup : *backups) ReplicaFor(backups_, backup, thread_.node_id()).entries.push_back(index);
  }
  written_regions_ = RegionsOf(writes_);
  for (const auto& [address, read] : tx_->reads) {
    if (!tx_->writes.contains(address)) to_validate_.push_back(read);
  }
  thread_.stats().write_primaries += primaries_.size();
  return absl::OkStatus();
}

absl::Status CommitOperation::PlanStillHolds() {
  const memory::RegionMap& map = thread_.replicas();
  if (map.epoch() == plan_epoch_) return absl::OkStatus();
  // Removed since (paused or cut off past its lease, then admitted again): recovery decided this
  // transaction from what the replicas held when they fenced the removal; a record sent now would change
  // a decided transaction (issue 58, path 4).
  if (thread_.AdmittedAgainSince(id_.epoch)) {
    return absl::UnavailableError(absl::StrCat("node ", thread_.node_id(), " was removed from the configuration after ",
                                               id_.ToString(), " began (now ", map.epoch(), "): recovery decides it"));
  }
  for (const bool primary : {true, false}) {
    for (const Replica& r : primary ? primaries_ : backups_) {
      for (size_t entry : r.entries) {
        const uint32_t region = writes_[entry].ref.address.region;
        absl::StatusOr<memory::RegionReplicas> now = map.ReplicasOf(region);
        const bool holds = now.ok() && (primary ? now->primary == r.node
                                                : std::find(now->backups.begin(), now->backups.end(), r.node) !=
                                                      now->backups.end());
        if (!holds) {
          return absl::UnavailableError(absl::StrCat("region ", region, " has other replicas in configuration ",
                                                     map.epoch(), " than planned in ", plan_epoch_, " (node ",
                                                     r.node, " was its ", primary ? "primary" : "backup", ")"));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CommitOperation::SetAsideLogRoom() {
  // Every record this commit may still send after LOCK: COMMIT-PRIMARY or ABORT to each primary (room for
  // both, simplest), COMMIT-BACKUP and ABORT to each backup. A full log refuses the commit before it starts.
  const absl::Time now = thread_.clock().Now();
  for (Replica& p : primaries_) {
    if (p.local) continue;
    const std::vector<size_t> sizes = {RecordSize(0), RecordSize(0)};
    auto room = thread_.messenger().SetAside(p.node, sizes);
    if (!room.ok()) return absl::IsResourceExhausted(room.status()) ? absl::AbortedError("log full") : room.status();
    p.set_aside = *room;
    p.room_in = thread_.messenger().sender(p.node);
  }
  for (Replica& b : backups_) {
    if (b.local) continue;
    b.truncated = thread_.truncator().Take(b.node, id_.epoch, 256);
    const std::vector<size_t> sizes = {RecordSize(b.truncated.size(), EntriesOf(b), written_regions_.size()),
                                       RecordSize(0)};
    auto room = thread_.messenger().SetAside(b.node, sizes);
    if (!room.ok()) {
      thread_.truncator().PutBack(b.node, id_.epoch, b.truncated, now);
      b.truncated.clear();
      return absl::IsResourceExhausted(room.status()) ? absl::AbortedError("log full") : room.status();
    }
    b.set_aside = *room;
    b.room_in = thread_.messenger().sender(b.node);
  }
  return absl::OkStatus();
}

void CommitOperation::ReleaseLogRoom() {
  const absl::Time now = thread_.clock().Now();
  for (auto* replicas : {&primaries_, &backups_}) {
    for (Replica& r : *replicas) {
      if (RoomFor(r) != nullptr && r.set_aside != 0) thread_.messenger().ReleaseSetAside(r.node, r.set_aside);
      r.set_aside = 0;
      if (!r.truncated.empty()) thread_.truncator().PutBack(r.node, id_.epoch, r.truncated, now);
      r.truncated.clear();
    }
  }
}

uint64_t* CommitOperation::RoomFor(Replica& replica) {
  if (replica.room_in == nullptr || thread_.messenger().sender(replica.node) != replica.room_in) {
    replica.set_aside = 0;
    return nullptr;
  }
  return &replica.set_aside;
}

Record CommitOperation::RecordFor(RecordKind kind, Replica& replica, bool with_entries) {
  Record record;
  record.kind = kind;
  record.id = id_;
  if (kind == RecordKind::kCommitBackup) record.log_epoch = log_epoch_;
  record.truncated = std::move(replica.truncated);
  replica.truncated.clear();
  if (with_entries) {
    record.written_regions = written_regions_;
    for (size_t i : replica.entries) record.entries.push_back(writes_[i]);
  }
  return record;
}

std::vector<const WriteEntry*> CommitOperation::EntriesOf(const Replica& replica) const {
  std::vector<const WriteEntry*> entries;
  entries.reserve(replica.entries.size());
  for (size_t i : replica.entries) entries.push_back(&writes_[i]);
  return entries;
}

std::string CommitOperation::EncodeFor(RecordKind kind, Replica& replica) {
  const bool with_entries = kind == RecordKind::kLock || kind == RecordKind::kCommitBackup;
  std::string bytes = EncodeRecord(kind, id_, thread_.mark(), kind == RecordKind::kCommitBackup ? log_epoch_ : 0,
                                   replica.truncated,
                                   with_entries ? std::span<const uint32_t>(written_regions_) : std::span<const uint32_t>(),
                                   with_entries ? EntriesOf(replica) : std::vector<const WriteEntry*>{});
  replica.piggybacked = std::move(replica.truncated);  // kept for a resend
  replica.truncated.clear();
  return bytes;
}

}  // namespace fathom::txn
