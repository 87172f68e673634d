#include "txn/participant.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "platform/base/log.h"
#include "platform/base/status_macros.h"

namespace fathom::txn {
namespace {

std::span<const std::byte> Bytes(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

// Whether the locked object is in the state `entry` expects: the live incarnation it names for a write or
// free, a free slot of that incarnation for an allocation.
bool InExpectedState(const object::ObjectHeader& header, const WriteEntry& entry) {
  if (entry.op == WriteOp::kAlloc) return !header.live() && header.incarnation == entry.ref.incarnation;
  return header.live() && header.incarnation == entry.ref.incarnation && header.capacity == entry.ref.capacity;
}

}  // namespace

Participant::Participant(object::ObjectStore* store, memory::SlabAllocator* allocator, BackupStore* backups,
                         std::function<uint64_t(uint32_t region)> region_bytes)
    : store_(store), allocator_(allocator), backups_(backups), region_bytes_(std::move(region_bytes)) {}

absl::StatusOr<LockGrant> Participant::Lock(const Record& record) {
  const Key key = KeyOf(record.id);
  if (primary_log_.contains(key)) {
    ++stats_.rejected;
    return absl::InvalidArgumentError(absl::StrCat(record.id.ToString(), " locked twice"));
  }
  std::vector<object::LocalObject> objects;
  objects.reserve(record.entries.size());
  for (const WriteEntry& entry : record.entries) {
    auto object = store_->Resolve(entry.ref);
    if (!object.ok()) {
      ++stats_.rejected;
      // A region this node does not serve: the coordinator's map is older or newer than ours, or a
      // promoted region is not served yet. Both pass; anything else is a bad reference.
      const auto code = absl::IsNotFound(object.status()) ? absl::StatusCode::kUnavailable
                                                          : absl::StatusCode::kInvalidArgument;
      return absl::Status(code, absl::StrCat(record.id.ToString(), ": ", object.status().message()));
    }
    if (entry.op == WriteOp::kAlloc) {
      auto reserved = reserved_.find(entry.ref.address.raw());
      if (reserved == reserved_.end() || !(reserved->second.ref == entry.ref) ||
          reserved->second.coordinator != record.id.node) {
        ++stats_.rejected;
        return absl::InvalidArgumentError(absl::StrCat(record.id.ToString(), " allocates ",
                                                       entry.ref.address.ToString(), ", which it did not reserve"));
      }
    }
    objects.push_back(*object);
  }
  // While a log epoch closes no lock is granted (log_epochs.h): the coordinator retries.
  uint64_t epoch = 0;
  if (epochs_ != nullptr && !epochs_->TryLock(&epoch)) {
    ++stats_.locks_refused;
    return absl::AbortedError(absl::StrCat(kEpochClosing, ": epoch ", epochs_->current()));
  }
  std::vector<uint64_t> locked;
  locked.reserve(objects.size());
  auto undo = [&] {
    for (size_t i = 0; i < locked.size(); ++i) objects[i].Unlock(locked[i]);
    if (epochs_ != nullptr) epochs_->Released(epoch);
    ++stats_.locks_refused;
  };
  for (size_t i = 0; i < objects.size(); ++i) {
    const WriteEntry& entry = record.entries[i];
    auto version = objects[i].TryLock(entry.check_version ? std::optional<uint64_t>(entry.version) : std::nullopt);
    if (!version.ok()) {
      undo();
      return absl::AbortedError(absl::StrCat(entry.ref.address.ToString(), ": ", version.status().message()));
    }
    locked.push_back(*version);
    if (!InExpectedState(objects[i].ReadHeader(), entry)) {
      undo();
      return absl::AbortedError(absl::StrCat(entry.ref.address.ToString(), " is no longer the object ",
                                             WriteOpName(entry.op), " expects"));
    }
  }
  ++stats_.locks_granted;
  PrimaryEntry& kept = primary_log_[key];
  kept.record = record;
  kept.record.log_epoch = epoch;
  kept.locked = locked;
  return LockGrant{std::move(locked), epoch};
}

absl::Status Participant::CommitPrimary(const TxnId& id) {
  auto it = primary_log_.find(KeyOf(id));
  if (it == primary_log_.end() || it->second.committed) {
    ++stats_.rejected;
    return absl::InvalidArgumentError(absl::StrCat("commit of ", id.ToString(), ", which holds no locks here"));
  }
  PrimaryEntry& kept = it->second;
  for (size_t i = 0; i < kept.record.entries.size(); ++i) {
    const WriteEntry& entry = kept.record.entries[i];
    auto object = store_->Resolve(entry.ref);  // resolved at LOCK: cannot fail now
    // Told before the unlock, so the next writer of this object is told after us.
    if (on_install_) {
      const uint64_t new_version = ((kept.locked[i] & object::kVersionMask) + 1) & object::kVersionMask;
      on_install_(id, kept.record.log_epoch, entry, new_version, /*as_backup=*/false);
    }
    object->InstallAndUnlock(kept.locked[i], Bytes(entry.payload), entry.new_incarnation(), entry.new_flags());
    if (entry.op == WriteOp::kAlloc) reserved_.erase(entry.ref.address.raw());
    if (entry.op == WriteOp::kFree) {
      if (absl::Status s = allocator_->Free(entry.ref.address); !s.ok()) {
        ++stats_.errors;
        LogError("txn", "freeing %s after %s: %s", entry.ref.address.ToString().c_str(),
                id.ToString().c_str(), s.ToString().c_str());
      }
    }
  }
  kept.committed = true;
  if (epochs_ != nullptr) epochs_->Released(kept.record.log_epoch);
  ++stats_.commits_installed;
  return absl::OkStatus();
}

absl::Status Participant::CommitPrimaryAgain(const TxnId& id) {
  auto it = primary_log_.find(KeyOf(id));
  if (it != primary_log_.end() && !it->second.committed) return CommitPrimary(id);
  ++stats_.duplicate_commits;
  return absl::OkStatus();
}

absl::Status Participant::CommitBackup(Record record) {
  for (const WriteEntry& entry : record.entries) {
    const uint64_t bytes = region_bytes_(entry.ref.address.region);
    if (bytes == 0 || uint64_t{entry.ref.address.offset} + entry.ref.capacity > bytes) {
      ++stats_.rejected;
      return absl::InvalidArgumentError(absl::StrCat(record.id.ToString(), ": ", entry.ref.address.ToString(),
                                                     " is not in a region this node backs up"));
    }
  }
  const Key key = KeyOf(record.id);
  ++stats_.backup_records;
  backup_log_[key] = std::move(record);
  return absl::OkStatus();
}

namespace {

bool Writes(const Record& record, uint32_t region) {
  return std::any_of(record.entries.begin(), record.entries.end(),
                     [region](const WriteEntry& e) { return e.ref.address.region == region; });
}

}  // namespace

size_t Participant::BackupRecordsFor(uint32_t region) const {
  return std::count_if(backup_log_.begin(), backup_log_.end(),
                       [region](const auto& kept) { return Writes(kept.second, region); });
}

absl::Status Participant::ApplyFill(const Record& record) {
  for (const WriteEntry& entry : record.entries) {
    const uint64_t bytes = region_bytes_(entry.ref.address.region);
    if (bytes == 0) {
      ++stats_.rejected;
      return absl::InvalidArgumentError(
          absl::StrCat("fill of ", entry.ref.address.ToString(), ": not a region this node backs up"));
    }
    absl::StatusOr<bool> applied = backups_->Apply(entry, bytes);
    if (!applied.ok()) {
      ++stats_.rejected;
      return applied.status();
    }
    ++(*applied ? stats_.backup_objects_applied : stats_.backup_objects_skipped);
  }
  return absl::OkStatus();
}

size_t Participant::OlderLocksOn(uint32_t region, uint64_t epoch) const {
  return std::count_if(primary_log_.begin(), primary_log_.end(), [region, epoch](const auto& kept) {
    const PrimaryEntry& entry = kept.second;
    return !entry.committed && entry.record.id.epoch < epoch && Writes(entry.record, region);
  });
}

std::string Participant::Describe() const {
  std::vector<const PrimaryEntry*> locked;
  for (const auto& [key, entry] : primary_log_) {
    if (!entry.committed) locked.push_back(&entry);
  }
  std::string out = absl::StrCat("participant: ", locked.size(), " transactions hold locks, ",
                                 primary_log_.size() - locked.size(), " installed not truncated, ",
                                 backup_log_.size(), " backup records, ", recovered_commits_.size(),
                                 " recovered commits, ", recovered_aborts_.size(), " recovered aborts, ",
                                 truncated_.size(), " truncation tombstones");
  constexpr size_t kListed = 8;
  const size_t listed = std::min(locked.size(), kListed);
  std::partial_sort(locked.begin(), locked.begin() + listed, locked.end(),
                    [](const PrimaryEntry* a, const PrimaryEntry* b) { return KeyOf(a->record.id) < KeyOf(b->record.id); });
  for (size_t i = 0; i < listed; ++i) {
    const Record& record = locked[i]->record;
    absl::StrAppend(&out, i == 0 ? "; oldest locking: " : ", ", record.id.ToString(), " (", record.entries.size(),
                    " objects, first ", record.entries.empty() ? "-" : record.entries[0].ref.address.ToString(), ")");
  }
  return out;
}

void Participant::Abort(const TxnId& id) {
  const Key key = KeyOf(id);
  if (auto it = primary_log_.find(key); it != primary_log_.end() && !it->second.committed) {
    UndoLock(it->second);
    primary_log_.erase(it);
  }
  if (backup_log_.erase(key) > 0) ++stats_.aborts;
}

void Participant::UndoLock(const PrimaryEntry& held) {
  for (size_t i = 0; i < held.record.entries.size(); ++i) {
    auto object = store_->Resolve(held.record.entries[i].ref);
    object->Unlock(held.locked[i]);
  }
  if (epochs_ != nullptr) epochs_->Released(held.record.log_epoch);
  ++stats_.aborts;
}

size_t Participant::ForgetAfterRemoval() {
  size_t forgotten = backup_log_.size();
  for (auto& [key, held] : primary_log_) {
    ++forgotten;
    if (!held.committed) UndoLock(held);
  }
  primary_log_.clear();
  backup_log_.clear();
  recovered_commits_.clear();
  recovered_aborts_.clear();
  truncated_.clear();
  marks_.clear();
  return forgotten;
}

std::vector<Hold> Participant::HeldFor(const std::function<bool(const TxnId&)>& gone, size_t limit) const {
  std::vector<Hold> holds;
  for (const auto& [key, entry] : primary_log_) {
    if (holds.size() >= limit) return holds;
    if (!gone(entry.record.id)) continue;
    holds.push_back(Hold{entry.record.id, entry.committed ? HoldKind::kCommitted : HoldKind::kLocked,
                         RegionsOf(entry.record.entries), entry.record.written_regions});
  }
  for (const auto& [key, record] : backup_log_) {
    if (holds.size() >= limit) return holds;
    if (!gone(record.id)) continue;
    holds.push_back(Hold{record.id, recovered_commits_.contains(key) ? HoldKind::kCommitted : HoldKind::kRecord,
                         RegionsOf(record.entries), record.written_regions});
  }
  for (const auto& [key, id] : recovered_aborts_) {
    if (holds.size() >= limit) return holds;
    if (gone(id)) holds.push_back(Hold{id, HoldKind::kAborted, {}, {}});
  }
  for (const auto& [node, thread, counter, epoch] : truncated_) {
    if (holds.size() >= limit) return holds;
    const TxnId id{epoch, node, thread, counter};
    if (gone(id)) holds.push_back(Hold{id, HoldKind::kTruncated, {}, {}});
  }
  return holds;
}

std::vector<ThreadMark> Participant::MarksOf(const std::function<bool(uint32_t, uint64_t)>& gone) const {
  std::vector<ThreadMark> marks;
  for (const auto& [who, known] : marks_) {
    for (const CoordinatorMark& mark : known) {
      if (gone(who.first, mark.incarnation)) marks.push_back(ThreadMark{who.first, who.second, mark});
    }
  }
  std::sort(marks.begin(), marks.end(), [](const ThreadMark& a, const ThreadMark& b) {
    return std::tuple(a.node, a.thread, a.mark.incarnation) < std::tuple(b.node, b.thread, b.mark.incarnation);
  });
  return marks;
}

void Participant::OnMark(uint32_t node, uint16_t thread, const CoordinatorMark& mark) {
  if (mark.incarnation == 0) return;
  std::vector<CoordinatorMark>& known = marks_[{node, thread}];
  auto it = std::lower_bound(known.begin(), known.end(), mark.incarnation,
                             [](const CoordinatorMark& m, uint64_t incarnation) { return m.incarnation < incarnation; });
  if (it != known.end() && it->incarnation == mark.incarnation) {
    if (mark.settled_below <= it->settled_below) return;
    it->settled_below = mark.settled_below;
  } else {
    known.insert(it, mark);
    if (known.size() > kMaxIncarnationsKept) known.erase(known.begin());
  }
  // Tombstones it settles now, counters below its bound.
  for (auto t = truncated_.lower_bound({node, thread, 0, 0});
       t != truncated_.end() && std::get<0>(*t) == node && std::get<1>(*t) == thread &&
       std::get<2>(*t) < mark.settled_below;) {
    const auto& [n, th, counter, epoch] = *t;
    t = SettledBy(known, TxnId{epoch, n, th, counter}) ? truncated_.erase(t) : std::next(t);
  }
}

absl::Status Participant::Resolve(const TxnId& id, bool commit) {
  const Key key = KeyOf(id);
  if (truncated_.contains(TombstoneOf(id))) {
    if (commit) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat("abort of ", id.ToString(), ", which was applied here at truncation"));
  }
  auto primary = primary_log_.find(key);
  auto backup = backup_log_.find(key);
  if (commit) {
    if (recovered_aborts_.contains(key)) {
      return absl::FailedPreconditionError(absl::StrCat("commit of ", id.ToString(), ", which recovery aborted here"));
    }
    if (primary != primary_log_.end() && !primary->second.committed) RETURN_IF_ERROR(CommitPrimary(id));
    if (backup != backup_log_.end()) recovered_commits_.insert(key);
    return absl::OkStatus();
  }
  if ((primary != primary_log_.end() && primary->second.committed) || recovered_commits_.contains(key)) {
    return absl::FailedPreconditionError(absl::StrCat("abort of ", id.ToString(), ", which committed here"));
  }
  if (primary != primary_log_.end() || backup != backup_log_.end()) Abort(id);
  recovered_aborts_[key] = id;
  return absl::OkStatus();
}

absl::Status Participant::Forget(const TxnId& id) {
  const Key key = KeyOf(id);
  if (recovered_aborts_.erase(key) > 0 || truncated_.erase(TombstoneOf(id)) > 0) return absl::OkStatus();
  auto primary = primary_log_.find(key);
  auto backup = backup_log_.find(key);
  if ((primary != primary_log_.end() && !primary->second.committed) ||
      (backup != backup_log_.end() && !recovered_commits_.contains(key))) {
    return absl::FailedPreconditionError(absl::StrCat(id.ToString(), " is not decided here yet"));
  }
  recovered_commits_.erase(key);
  DropHeld(key);  // decided by recovery: no tombstone (recovery is what it would answer)
  return absl::OkStatus();
}

absl::StatusOr<object::ObjectRef> Participant::Reserve(uint32_t payload_capacity, uint32_t coordinator,
                                                       uint64_t epoch) {
  auto slot = allocator_->Allocate(uint64_t{payload_capacity} + object::kHeaderBytes);
  if (!slot.ok()) return slot.status();
  object::ObjectRef ref{slot->address, 0, slot->capacity};
  auto object = store_->Resolve(ref);
  if (!object.ok()) return object.status();
  // A reused slot keeps the incarnation its free moved to; fresh memory starts at 0.
  ref.incarnation = object->ReadHeader().incarnation;
  reserved_[ref.address.raw()] = Reservation{ref, coordinator, epoch};
  return ref;
}

absl::Status Participant::Release(const object::ObjectRef& ref, uint32_t coordinator) {
  auto it = reserved_.find(ref.address.raw());
  if (it == reserved_.end() || !(it->second.ref == ref) || it->second.coordinator != coordinator) {
    ++stats_.rejected;
    return absl::InvalidArgumentError(
        absl::StrCat(ref.address.ToString(), " is not a slot reserved here for node ", coordinator));
  }
  reserved_.erase(it);
  return allocator_->Free(ref.address);
}

size_t Participant::ReleaseReservationsOfGone(const std::function<bool(uint32_t, uint64_t)>& gone, size_t* kept) {
  *kept = 0;
  absl::flat_hash_set<uint64_t> locked;  // slots that LOCKs still held here allocate
  bool listed = false;
  size_t freed = 0;
  for (auto it = reserved_.begin(); it != reserved_.end();) {
    const Reservation& r = it->second;
    if (!gone(r.coordinator, r.epoch)) {
      ++it;
      continue;
    }
    if (!listed) {
      listed = true;
      for (const auto& [key, entry] : primary_log_) {
        if (entry.committed) continue;
        for (const WriteEntry& w : entry.record.entries) {
          if (w.op == WriteOp::kAlloc) locked.insert(w.ref.address.raw());
        }
      }
    }
    if (locked.contains(it->first)) {
      ++*kept;
      ++it;
      continue;
    }
    if (absl::Status s = allocator_->Free(r.ref.address); !s.ok()) {
      ++stats_.errors;
      LogError("txn", "freeing %s, reserved for node %u, which is gone: %s", r.ref.address.ToString().c_str(),
               r.coordinator, s.ToString().c_str());
    }
    ++stats_.reservations_of_gone_freed;
    ++freed;
    reserved_.erase(it++);
  }
  return freed;
}

void Participant::ApplyBackup(const Record& record) {
  for (const WriteEntry& entry : record.entries) {
    auto changed = backups_->Apply(entry, region_bytes_(entry.ref.address.region));
    if (!changed.ok()) {
      ++stats_.errors;
      LogError("txn", "backup of %s at %s: %s", record.id.ToString().c_str(),
              entry.ref.address.ToString().c_str(), changed.status().ToString().c_str());
      continue;
    }
    ++(*changed ? stats_.backup_objects_applied : stats_.backup_objects_skipped);
    if (*changed && on_install_) on_install_(record.id, record.log_epoch, entry, entry.version, /*as_backup=*/true);
  }
}

bool Participant::DropHeld(const Key& key) {
  bool held = false;
  if (auto it = backup_log_.find(key); it != backup_log_.end()) {
    ApplyBackup(it->second);
    backup_log_.erase(it);
    ++stats_.truncated;
    held = true;
  }
  if (auto it = primary_log_.find(key); it != primary_log_.end() && it->second.committed) {
    primary_log_.erase(it);
    ++stats_.truncated;
    held = true;
  }
  return held;
}

void Participant::Truncate(uint64_t epoch, uint32_t node, uint16_t thread, std::span<const uint64_t> counters) {
  auto mark = marks_.find({node, thread});
  for (uint64_t counter : counters) {
    const TxnId id{epoch, node, thread, counter};
    if (!DropHeld(KeyOf(id))) continue;
    if (mark == marks_.end() || !SettledBy(mark->second, id)) truncated_.insert(TombstoneOf(id));
  }
}

}  // namespace fathom::txn
