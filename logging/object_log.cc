#include "logging/object_log.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "logging/log_reader.h"
#include "logging/rocksdb_status.h"
#include "platform/base/mutex.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace fathom::logging {

struct ObjectLog::Core {
  explicit Core(const Clock* clock) : clock(clock) {}
  struct Queued {
    ObjectState state;
    absl::Time enqueued;
  };
  // Counters with the lag computed now. REQUIRES: mu held.
  ObjectLogStats Snapshot() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    ObjectLogStats s = stats;
    s.lag_records = s.enqueued_position - s.persisted_position;
    absl::Time oldest = absl::InfiniteFuture();
    if (inflight) oldest = inflight_since;
    else if (!queue.empty()) oldest = queue.front().enqueued;
    if (oldest != absl::InfiniteFuture()) {
      s.lag_micros = static_cast<uint64_t>(std::max<int64_t>(0, absl::ToInt64Microseconds(clock->Now() - oldest)));
    }
    return s;
  }

  const Clock* const clock;
  mutable absl::Mutex mu;
  absl::CondVar work_cv;       // the writer: records queued, or stop
  absl::CondVar room_cv;       // appenders: room in the queue
  absl::CondVar persisted_cv;  // WaitForPersisted: a batch is on disk
  std::deque<Queued> queue ABSL_GUARDED_BY(mu);
  bool inflight ABSL_GUARDED_BY(mu) = false;  // a batch taken from the queue, not yet on disk
  absl::Time inflight_since ABSL_GUARDED_BY(mu);
  bool stop ABSL_GUARDED_BY(mu) = false;
  bool drain ABSL_GUARDED_BY(mu) = true;
  uint64_t gap_position ABSL_GUARDED_BY(mu) = 0;  // first dropped position (0: none)
  // Ends of log epochs not yet on disk: (epoch, the last position appended before it), oldest first.
  std::deque<std::pair<uint64_t, uint64_t>> markers ABSL_GUARDED_BY(mu);
  std::optional<LoggedMembers> members ABSL_GUARDED_BY(mu);  // to write with the next batch
  ObjectLogStats stats ABSL_GUARDED_BY(mu);
};

struct ObjectLog::Work {
  std::vector<ObjectState> batch;
  uint64_t gap = 0;
  uint64_t closes = 0;
  std::optional<LoggedMembers> members;
};

struct ObjectLog::Prepared {
  rocksdb::WriteBatch write_batch;
  std::string what;  // names it in errors
  size_t states = 0;
  uint64_t superseded = 0;
  uint64_t bytes = 0;
  size_t folded = 0;  // segments folded by it
  uint64_t closes = 0;
  bool has_segment = false;
};

void ObjectLogStats::AddTo(std::map<std::string, uint64_t>& counters) const {
  counters["log.enqueued"] += enqueued;
  counters["log.persisted"] += persisted;
  counters["log.superseded"] += superseded;
  counters["log.dropped"] += dropped;
  counters["log.batches"] += batches;
  counters["log.folds"] += folds;
  counters["log.bytes"] += bytes;
  counters["log.write_errors"] += write_errors;
  counters["log.enqueued_position"] = enqueued_position;
  counters["log.persisted_position"] = persisted_position;
  counters["log.closed_epoch"] = closed_epoch;
  counters["log.durable_epoch"] = durable_epoch;
  counters["log.lag_records"] = lag_records;
  counters["log.lag_micros"] = lag_micros;
  counters["log.error"] = last_error.ok() ? 0 : 1;
}

namespace {

rocksdb::Options DbOptions(const ObjectLogOptions& options) {
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  db_options.paranoid_checks = true;
  // A torn tail (the last batches of a crash) is expected and cut off; damage before the end is an error.
  db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  if (options.env != nullptr) db_options.env = options.env;
  return db_options;
}

// Adds to `write_batch` a fold: the latest state of every object in `segments` (states in position order)
// under its object key, m:folded = `position`, and the deletion of every segment up to it. Returns value
// bytes.
template <typename Iterator>
uint64_t AddFold(rocksdb::WriteBatch& write_batch, Iterator begin, Iterator end, uint64_t position) {
  std::map<uint64_t, const ObjectState*> latest;  // by address, so keys go in in order
  for (Iterator segment = begin; segment != end; ++segment) {
    for (const ObjectState& state : segment->states) latest[state.address.raw()] = &state;
  }
  uint64_t bytes = 0;
  for (const auto& [address, state] : latest) {
    const std::string value = EncodeState(*state);
    bytes += value.size();
    write_batch.Put(ObjectKey(state->address), value);
  }
  write_batch.Put(std::string(kFoldedKey), EncodeMeta(kFoldedKey, position));
  write_batch.DeleteRange(SegmentKey(0), SegmentKey(position + 1));
  return bytes;
}

}  // namespace

rocksdb::Status ObjectLog::Reopen() {
  // RocksDB stays read-only after a failed write; Resume clears what it can, and a reopen (which replays
  // the write-ahead log to its last complete batch) clears the rest, once the cause is gone.
  if (db_ != nullptr && db_->Resume().ok()) return rocksdb::Status::OK();
  if (db_ != nullptr) {
    db_->Close().PermitUncheckedError();
    db_.reset();
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(DbOptions(options_), options_.dir, &raw);
  if (s.ok()) db_.reset(raw);
  return s;
}

absl::StatusOr<std::unique_ptr<ObjectLog>> ObjectLog::Open(ObjectLogOptions options) {
  if (options.dir.empty()) return absl::InvalidArgumentError("the log needs a directory");
  if (options.node_id == 0) return absl::InvalidArgumentError("the log needs a node id");
  if (options.max_batch_records == 0 || options.max_queued_records == 0) {
    return absl::InvalidArgumentError("batch and queue bounds must be positive");
  }
  if (options.env != nullptr) {
    // Each missing directory on the way, as create_directories does.
    const std::filesystem::path dir(options.dir);
    std::filesystem::path partial;
    for (const std::filesystem::path& part : dir) {
      partial /= part;
      if (partial == partial.root_path()) continue;
      if (rocksdb::Status s = options.env->CreateDirIfMissing(partial.string()); !s.ok()) {
        return FromRocks(s, absl::StrCat("log ", options.dir, ": cannot create it"));
      }
    }
  } else {
    std::error_code ec;
    std::filesystem::create_directories(options.dir, ec);
    if (ec) return absl::UnavailableError(absl::StrCat("log ", options.dir, ": ", ec.message()));
  }
  rocksdb::DB* raw = nullptr;
  if (rocksdb::Status s = rocksdb::DB::Open(DbOptions(options), options.dir, &raw); !s.ok()) {
    return FromRocks(s, absl::StrCat("log ", options.dir, " (node ", options.node_id, "): cannot open"));
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  auto meta = [&](std::string_view key) -> absl::StatusOr<std::optional<uint64_t>> {
    std::string value;
    rocksdb::ReadOptions read;
    read.verify_checksums = true;
    rocksdb::Status s = db->Get(read, rocksdb::Slice(key.data(), key.size()), &value);
    if (s.IsNotFound()) return std::optional<uint64_t>();
    if (!s.ok()) return FromRocks(s, absl::StrCat("log ", options.dir, ": reading ", std::string(key)));
    auto decoded = DecodeMeta(key, value);
    if (!decoded.ok()) {
      return absl::Status(decoded.status().code(), absl::StrCat("log ", options.dir, ": ", decoded.status().message()));
    }
    return std::optional<uint64_t>(*decoded);
  };
  auto node = meta(kNodeKey);
  if (!node.ok()) return node.status();
  if (node->has_value() && **node != options.node_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("log ", options.dir, " belongs to node ", **node, ", not node ", options.node_id));
  }
  auto gap = meta(kGapKey);
  if (!gap.ok()) return gap.status();
  if (gap->has_value()) {
    return absl::FailedPreconditionError(absl::StrCat("log ", options.dir, " (node ", options.node_id,
                                                      ") has a gap: states from position ", **gap,
                                                      " on were dropped, it no longer covers the node's memory"));
  }
  auto position = meta(kPositionKey);
  if (!position.ok()) return position.status();
  auto format = meta(kFormatKey);
  if (!format.ok()) return format.status();
  auto folded = meta(kFoldedKey);
  if (!folded.ok()) return folded.status();
  rocksdb::WriteOptions write;
  write.sync = true;
  if (!node->has_value()) {
    rocksdb::WriteBatch created;
    created.Put(std::string(kNodeKey), EncodeMeta(kNodeKey, options.node_id));
    created.Put(std::string(kFormatKey), EncodeMeta(kFormatKey, kLogFormat));
    if (rocksdb::Status s = db->Write(write, &created); !s.ok()) {
      return FromRocks(s, absl::StrCat("log ", options.dir, ": writing the node id"));
    }
  } else if (absl::Status s = CheckLogFormat(*format); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("log ", options.dir, " (node ", options.node_id, "): ", s.message()));
  }
  auto closed = meta(kClosedKey);
  if (!closed.ok()) return closed.status();
  // What the last run left in segments (a crash, or states not yet durable at a clean stop).
  const uint64_t persisted = position->value_or(0);
  Unfolded leftover;
  leftover.last = persisted;
  absl::Status read = ReadSegments(*db, folded->value_or(0), persisted, [&](ObjectState&& state) {
    if (options.cut.has_value() && state.log_epoch > *options.cut) return;  // not restored: gone for good
    leftover.max_epoch = std::max(leftover.max_epoch, state.log_epoch);
    leftover.bytes += kSegmentEntryBytes + state.payload.size();
    leftover.states.push_back(std::move(state));
  });
  if (!read.ok()) {
    return absl::Status(read.code(), absl::StrCat("log ", options.dir, " (node ", options.node_id, "): ", read.message()));
  }
  uint64_t closed_epoch = closed->value_or(0);
  // Without a cut, only states of no log epoch are folded now: which epochs a restart keeps is not known.
  const bool fold = folded->value_or(0) < persisted && (options.cut.has_value() || leftover.max_epoch == 0);
  if (fold || (options.cut.has_value() && closed_epoch != *options.cut)) {
    rocksdb::WriteBatch batch;
    if (fold) AddFold(batch, &leftover, &leftover + 1, persisted);
    if (options.cut.has_value()) {
      closed_epoch = *options.cut;
      batch.Put(std::string(kClosedKey), EncodeMeta(kClosedKey, closed_epoch));
    }
    if (rocksdb::Status s = db->Write(write, &batch); !s.ok()) {
      return FromRocks(s, absl::StrCat("log ", options.dir, ": folding the segments up to position ", persisted));
    }
  }
  auto log = std::unique_ptr<ObjectLog>(new ObjectLog(std::move(options), std::move(db), persisted, closed_epoch));
  if (!fold && !leftover.states.empty()) {
    log->unfolded_bytes_ = leftover.bytes;
    log->unfolded_.push_back(std::move(leftover));
  }
  log->StartWriter();
  return log;
}

ObjectLog::ObjectLog(ObjectLogOptions options, std::unique_ptr<rocksdb::DB> db, uint64_t position,
                     uint64_t closed_epoch)
    : options_(std::move(options)),
      db_(std::move(db)),
      core_(std::make_shared<Core>(options_.clock)),
      segment_start_(position + 1),
      backoff_(options_.retry_backoff) {
  MutexLock lock(&core_->mu);
  core_->stats.enqueued_position = position;
  core_->stats.persisted_position = position;
  core_->stats.closed_epoch = closed_epoch;
}

void ObjectLog::StartWriter() {
  if (options_.executor != nullptr) {
    task_ = options_.executor->AddTask(options_.node_id, [this] { return WriterStep(); });
    return;
  }
  writer_ = std::thread([this] { WriterLoop(); });
}

ObjectLog::~ObjectLog() { Stop(); }

void ObjectLog::Stop() { Shutdown(/*drain=*/true); }
void ObjectLog::Abandon() { Shutdown(/*drain=*/false); }

void ObjectLog::Shutdown(bool drain) {
  if (stopped_) return;
  stopped_ = true;
  {
    MutexLock lock(&core_->mu);
    core_->stop = true;
    core_->drain = drain;
    core_->work_cv.SignalAll();
    core_->room_cv.SignalAll();
  }
  if (options_.executor != nullptr) {
    options_.executor->RemoveTask(task_);
    // What is queued is written now, one try each (as the thread does once stopped).
    if (drain) {
      bool written = pending_ == nullptr || WriteOnce(*pending_);
      if (!written) GiveUp(*pending_);
      pending_.reset();
      Work work;
      for (;;) {
        {
          MutexLock lock(&core_->mu);
          if (!written || !TakeWorkLocked(work)) break;
        }
        std::unique_ptr<Prepared> prepared = Prepare(work);
        written = WriteOnce(*prepared);
        if (!written) GiveUp(*prepared);
      }
      if (written) FoldAtStop();
    }
  } else {
    writer_.join();
  }
  if (db_ == nullptr) return;
  if (rocksdb::Status s = db_->Close(); !s.ok()) {
    MutexLock lock(&core_->mu);
    core_->stats.last_error = FromRocks(s, absl::StrCat("log ", options_.dir, ": closing"));
  }
  db_.reset();
}

uint64_t ObjectLog::Append(ObjectState state) {
  Core& c = *core_;
  const absl::Time now = c.clock->Now();
  MutexLock lock(&c.mu);
  if (c.queue.size() >= options_.max_queued_records && !c.stop && options_.executor == nullptr) {
    // Back-pressure for a moment (a burst), never indefinitely: the commit path must not hang on a disk.
    const absl::Time deadline = absl::Now() + options_.max_enqueue_wait;
    while (c.queue.size() >= options_.max_queued_records && !c.stop) {
      if (WaitWithDeadline(&c.room_cv, &c.mu, deadline)) break;
    }
  }
  const uint64_t position = ++c.stats.enqueued_position;
  if (c.queue.size() >= options_.max_queued_records || c.stop) {
    ++c.stats.dropped;
    if (c.gap_position == 0) c.gap_position = position;
    return position;
  }
  ++c.stats.enqueued;
  state.position = position;
  c.queue.push_back({std::move(state), now});
  // The writer waits for the first state, or for a full batch; it wakes for nothing else.
  if (c.queue.size() == 1 || c.queue.size() == options_.max_batch_records) c.work_cv.Signal();
  return position;
}

absl::StatusOr<uint64_t> ObjectLog::Persisted(uint64_t ObjectLogStats::*field) const {
  Core& c = *core_;
  MutexLock lock(&c.mu);
  if (c.gap_position != 0) {
    return absl::DataLossError(absl::StrCat("log ", options_.dir, ": states dropped (queue full) from position ",
                                            c.gap_position, ", it cannot persist them"));
  }
  return c.stats.*field;
}

absl::StatusOr<uint64_t> ObjectLog::PersistedPosition() const { return Persisted(&ObjectLogStats::persisted_position); }

absl::Status ObjectLog::WaitForPersisted(absl::Duration timeout) {
  Core& c = *core_;
  uint64_t target;
  {
    MutexLock lock(&c.mu);
    target = c.stats.enqueued_position;
  }
  if (options_.executor != nullptr) {
    node::WaitUntil(options_.executor, *options_.clock, [&] {
      MutexLock lock(&c.mu);
      return c.stats.persisted_position >= target || c.gap_position != 0 || c.stop;
    }, timeout);
  }
  const absl::Time deadline = absl::Now() + timeout;
  MutexLock lock(&c.mu);
  while (options_.executor == nullptr && c.stats.persisted_position < target && c.gap_position == 0 && !c.stop) {
    if (WaitWithDeadline(&c.persisted_cv, &c.mu, deadline)) break;
  }
  if (c.gap_position != 0) {
    return absl::DataLossError(absl::StrCat("log ", options_.dir, ": ", c.stats.dropped,
                                            " states dropped (queue full), the first at position ", c.gap_position));
  }
  if (c.stats.persisted_position >= target) return absl::OkStatus();
  const ObjectLogStats s = c.Snapshot();
  return absl::DeadlineExceededError(absl::StrCat("log ", options_.dir, ": persisted position ", s.persisted_position,
                                                  " of ", target, ", lag ", s.lag_micros, " us; last write error: ",
                                                  s.last_error.ToString()));
}

ObjectLogStats ObjectLog::Stats() const {
  MutexLock lock(&core_->mu);
  return core_->Snapshot();
}

std::function<void(std::map<std::string, uint64_t>&)> ObjectLog::CounterSource() const {
  return [core = core_](std::map<std::string, uint64_t>& counters) {
    MutexLock lock(&core->mu);
    core->Snapshot().AddTo(counters);
  };
}

void ObjectLog::RecordMembers(LoggedMembers members) {
  Core& c = *core_;
  MutexLock lock(&c.mu);
  c.members = std::move(members);
  c.work_cv.Signal();
}

void ObjectLog::CloseEpoch(uint64_t epoch) {
  Core& c = *core_;
  MutexLock lock(&c.mu);
  c.markers.emplace_back(epoch, c.stats.enqueued_position);
  c.work_cv.Signal();
}

absl::StatusOr<uint64_t> ObjectLog::PersistedEpoch() const { return Persisted(&ObjectLogStats::closed_epoch); }

void ObjectLog::SetDurableEpoch(uint64_t epoch) {
  Core& c = *core_;
  MutexLock lock(&c.mu);
  c.stats.durable_epoch = std::max(c.stats.durable_epoch, epoch);
}

bool ObjectLog::TakeWorkLocked(Work& work) {
  Core& c = *core_;
  work = Work();
  if (!c.queue.empty()) {
    const size_t n = std::min(c.queue.size(), options_.max_batch_records);
    c.inflight = true;
    c.inflight_since = c.queue.front().enqueued;
    for (size_t i = 0; i < n; ++i) {
      work.batch.push_back(std::move(c.queue.front().state));
      c.queue.pop_front();
    }
  }
  // An epoch ends on disk with the batch that holds its last state (or on its own, after it).
  const uint64_t last = work.batch.empty() ? c.stats.persisted_position : work.batch.back().position;
  while (!c.markers.empty() && c.markers.front().second <= last) {
    work.closes = c.markers.front().first;
    c.markers.pop_front();
  }
  // Only states dropped on overflow leave a marker past every queued state; the gap already made the log
  // unusable, so it is never written.
  work.members = std::move(c.members);
  c.members.reset();
  if (work.batch.empty() && work.closes == 0 && !work.members.has_value()) {
    c.markers.clear();
    return false;
  }
  work.gap = c.gap_position;
  c.room_cv.SignalAll();
  return true;
}

void ObjectLog::WriterLoop() {
  Core& c = *core_;
  Work work;
  for (;;) {
    {
      MutexLock lock(&c.mu);
      while (c.queue.empty() && c.markers.empty() && !c.members.has_value() && !c.stop) {
        WaitWithDeadline(&c.work_cv, &c.mu, absl::InfiniteFuture());
      }
      if (c.queue.empty() && c.markers.empty() && !c.members.has_value() && c.drain) break;
      if (!c.drain) return;
      if (!c.queue.empty()) {
        const absl::Time until = absl::Now() + options_.batch_delay;
        while (c.queue.size() < options_.max_batch_records && !c.stop) {
          if (WaitWithDeadline(&c.work_cv, &c.mu, until)) break;
        }
        if (!c.drain) return;  // abandoned while gathering: the batch is lost, as in a crash
      }
      if (!TakeWorkLocked(work)) continue;
    }
    std::unique_ptr<Prepared> prepared = Prepare(work);
    if (!WriteWithRetries(*prepared)) return;
  }
  FoldAtStop();
}

size_t ObjectLog::WriterStep() {
  const absl::Time now = options_.clock->Now();
  if (pending_ != nullptr) {
    if (now < retry_at_) return 0;
    BackOffAndReopen();
  } else {
    Work work;
    {
      Core& c = *core_;
      MutexLock lock(&c.mu);
      // The batch window counts from the oldest queued state; a full batch goes at once.
      if (!c.queue.empty() && c.queue.size() < options_.max_batch_records &&
          now < c.queue.front().enqueued + options_.batch_delay) {
        return 0;
      }
      if (!TakeWorkLocked(work)) return 0;
    }
    pending_ = Prepare(work);
  }
  if (WriteOnce(*pending_)) {
    pending_.reset();
  } else {
    retry_at_ = now + backoff_;
  }
  return 1;
}

void ObjectLog::FoldAtStop() {
  // A clean stop folds what it may: the segments of durable epochs (one try: what stays unfolded is
  // still in its segments, and a later Open folds it).
  if (unfolded_.empty() || db_ == nullptr) return;
  rocksdb::WriteBatch fold;
  uint64_t bytes = 0;
  const size_t folded = AddFoldOfDurable(fold, bytes);
  if (folded == 0) return;
  rocksdb::WriteOptions write_options;
  write_options.sync = options_.sync;
  Core& c = *core_;
  if (rocksdb::Status s = db_->Write(write_options, &fold); !s.ok()) {
    MutexLock lock(&c.mu);
    ++c.stats.write_errors;
    c.stats.last_error = FromRocks(s, absl::StrCat("log ", options_.dir, ": folding at stop"));
    return;
  }
  DropFolded(folded);
  MutexLock lock(&c.mu);
  ++c.stats.folds;
}

size_t ObjectLog::AddFoldOfDurable(rocksdb::WriteBatch& write_batch, uint64_t& bytes) {
  uint64_t durable;
  {
    MutexLock lock(&core_->mu);
    durable = core_->stats.durable_epoch;
  }
  size_t n = 0;
  while (n < unfolded_.size() && unfolded_[n].max_epoch <= durable) ++n;
  if (n == 0) return 0;
  bytes += AddFold(write_batch, unfolded_.begin(), unfolded_.begin() + n, unfolded_[n - 1].last);
  return n;
}

void ObjectLog::DropFolded(size_t segments) {
  for (size_t i = 0; i < segments; ++i) {
    unfolded_bytes_ -= unfolded_.front().bytes;
    unfolded_.pop_front();
  }
}

std::unique_ptr<ObjectLog::Prepared> ObjectLog::Prepare(Work& work) {
  auto prepared = std::make_unique<Prepared>();
  Prepared& p = *prepared;
  std::vector<ObjectState>& batch = work.batch;
  rocksdb::WriteBatch& write_batch = p.write_batch;
  if (!batch.empty()) {
    Unfolded segment;
    SegmentEncoder encoder(segment_start_);
    for (ObjectState& state : batch) {
      auto [it, inserted] = written_versions_.try_emplace(state.address.raw(), state.version);
      if (!inserted) {
        if (it->second >= state.version) {
          ++p.superseded;
          continue;
        }
        it->second = state.version;
      }
      encoder.Add(state);
      segment.bytes += kSegmentEntryBytes + state.payload.size();
      segment.max_epoch = std::max(segment.max_epoch, state.log_epoch);
      segment.states.push_back(std::move(state));
    }
    segment.last = batch.back().position;
    const std::string value = encoder.Finish(segment.last);
    p.bytes += value.size();
    write_batch.Put(SegmentKey(segment_start_), value);
    unfolded_bytes_ += segment.bytes;
    unfolded_.push_back(std::move(segment));
    p.has_segment = true;
    p.states = batch.size();
    // Every fold_bytes of segments, fold those whose epochs every member has closed (the one just put
    // may be among them: its deletion comes after it in the same write).
    if (unfolded_bytes_ >= options_.fold_bytes) p.folded = AddFoldOfDurable(write_batch, p.bytes);
    write_batch.Put(std::string(kPositionKey), EncodeMeta(kPositionKey, unfolded_.back().last));
  }
  p.closes = work.closes;
  if (work.closes != 0) write_batch.Put(std::string(kClosedKey), EncodeMeta(kClosedKey, work.closes));
  if (work.members.has_value()) {
    write_batch.Put(std::string(kMembersKey), EncodeMembers(kMembersKey, *work.members));
  }
  // The gap goes to disk with the first batch after it, so a reader cannot miss it.
  if (work.gap != 0) write_batch.Put(std::string(kGapKey), EncodeMeta(kGapKey, work.gap));
  p.what = batch.empty() ? absl::StrCat("closing log epoch ", work.closes, work.members ? " (members)" : "")
                         : absl::StrCat("writing positions ", batch.front().position, "..", unfolded_.back().last);
  return prepared;
}

bool ObjectLog::WriteOnce(Prepared& p) {
  Core& c = *core_;
  rocksdb::WriteOptions write_options;
  write_options.sync = options_.sync;
  absl::Status failed = reopen_error_;
  if (db_ != nullptr) {
    rocksdb::Status s = db_->Write(write_options, &p.write_batch);
    failed = s.ok() ? absl::OkStatus() : FromRocks(s, absl::StrCat("log ", options_.dir, ": ", p.what));
  }
  if (!failed.ok()) {
    MutexLock lock(&c.mu);
    ++c.stats.write_errors;
    c.stats.last_error = failed;
    return false;
  }
  backoff_ = options_.retry_backoff;
  if (p.has_segment) segment_start_ = unfolded_.back().last + 1;
  DropFolded(p.folded);
  MutexLock lock(&c.mu);
  c.inflight = false;
  c.stats.persisted += p.states;
  c.stats.superseded += p.superseded;
  c.stats.bytes += p.bytes;
  if (p.has_segment) {
    ++c.stats.batches;
    c.stats.persisted_position = segment_start_ - 1;
  }
  if (p.folded > 0) ++c.stats.folds;
  if (p.closes != 0) c.stats.closed_epoch = p.closes;
  c.stats.last_error = absl::OkStatus();
  c.persisted_cv.SignalAll();
  return true;
}

void ObjectLog::BackOffAndReopen() {
  backoff_ = std::min(backoff_ * 2, options_.max_retry_backoff);
  rocksdb::Status s = Reopen();  // if this fails, db_ is null and the next attempt reports why
  reopen_error_ = s.ok() ? absl::OkStatus() : FromRocks(s, absl::StrCat("log ", options_.dir, ": reopening"));
}

void ObjectLog::GiveUp(Prepared& p) {
  if (p.has_segment) {
    unfolded_bytes_ -= unfolded_.back().bytes;
    unfolded_.pop_back();
  }
  MutexLock lock(&core_->mu);
  core_->inflight = false;
}

bool ObjectLog::WriteWithRetries(Prepared& prepared) {
  Core& c = *core_;
  bool tried_since_stop = false;
  while (!WriteOnce(prepared)) {
    bool give_up = false;
    {
      MutexLock lock(&c.mu);
      // Stopping while the disk fails: one more try, then give up (what is lost is what a crash now
      // would lose; the persisted position says so).
      if (c.stop && (tried_since_stop || !c.drain)) {
        give_up = true;
      } else if (c.stop) {
        tried_since_stop = true;
      } else {
        WaitWithDeadline(&c.work_cv, &c.mu, absl::Now() + backoff_);
        tried_since_stop = c.stop;
      }
    }
    if (give_up) {
      GiveUp(prepared);
      return false;
    }
    BackOffAndReopen();
  }
  return true;
}

}  // namespace fathom::logging
