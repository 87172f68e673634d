#include "txn/txn_thread.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/base/status_macros.h"
#include "platform/memory/size_classes.h"
#include "platform/object/object_codec.h"
#include "txn/commit.h"

namespace fathom::txn {
namespace {

std::string ToString(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// The node whose memory holds `ref`'s slot (where it was allocated, where a reservation is released).
uint32_t MemoryOwnerOf(const object::ObjectRef& ref) { return memory::OwnerOfRegion(ref.address.region); }

absl::Status CheckRef(const object::ObjectRef& ref) {
  if (ref.capacity < 64 || ref.capacity % 64 != 0 || ref.address.offset % 64 != 0 || MemoryOwnerOf(ref) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(ref.address.ToString(), " with capacity ", ref.capacity, " is not an object reference"));
  }
  return absl::OkStatus();
}

}  // namespace

TxnThread::TxnThread(node::NodeThread* thread, uint32_t node_id, BackupStore* backups,
                     LogEpochs* epochs, const TxnOptions& options, const Clock* clock)
    : thread_(thread),
      node_id_(node_id),
      options_(options),
      clock_(clock),
      participant_(&thread->store(), &thread->allocator(), backups,
                   [this](uint32_t region) { return RegionBytes(region); }),
      truncator_(options.truncate_delay, options.truncate_batch),
      epochs_(epochs) {
  participant_.set_log_epochs(epochs);
}

TxnThread::~TxnThread() = default;

absl::Status TxnThread::Install() {
  msg::Messenger& m = thread_->messenger();
  for (msg::MessageType type : {kLockMessage, kCommitBackupMessage, kCommitPrimaryMessage, kAbortMessage,
                                kTruncateMessage, kCommitPrimaryAgainMessage}) {
    if (absl::Status s = m.Register(type, [this](const msg::Message& message, std::string* reply) {
          return OnRecord(message, reply);
        });
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = m.Register(kAllocMessage, [this](const msg::Message& message, std::string* reply) {
        return OnAlloc(message, reply);
      });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = m.Register(kFillMessage, [this](const msg::Message& message, std::string* reply) {
        return OnFill(message, reply);
      });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = m.Register(kOrphansMessage, [this](const msg::Message& message, std::string* reply) {
        return OnOrphans(message, reply);
      });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = m.Register(kResolveMessage, [this](const msg::Message& message, std::string* reply) {
        return OnResolve(message, reply);
      });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = m.Register(kReleaseMessage,
                                  [this](const msg::Message& message, std::string*) { return OnRelease(message); });
      !s.ok()) {
    return s;
  }
  thread_->AddDescriber([this] {
    return absl::StrCat(participant_.Describe(), "; truncations pending ", truncator_.pending(), ", timers ",
                        timers_.size());
  });
  thread_->AddPoller([this] {
    if (truncator_.pending() == 0) return size_t{0};
    const size_t sent = truncator_.Poll(thread_->messenger(), node_id_, index(), mark(), clock_->Now(),
                                        [this](uint32_t node) { return replicas().IsMember(node); });
    stats_.truncate_messages += sent;
    return sent;
  });
  thread_->AddPoller([this] { return ReleaseSlotsOfGoneCoordinators(); });
  thread_->AddConnectionListener([this](uint32_t peer) { SendOwed(peer); });
  thread_->AddPoller([this] {
    if (timers_.empty()) return size_t{0};
    const absl::Time now = clock_->Now();
    std::vector<std::function<void()>> due;
    for (size_t i = 0; i < timers_.size();) {
      if (timers_[i].first <= now) {
        due.push_back(std::move(timers_[i].second));
        timers_[i] = std::move(timers_.back());
        timers_.pop_back();
      } else {
        ++i;
      }
    }
    for (auto& task : due) task();  // may add timers
    return due.size();
  });
  if (epochs_ != nullptr && index() == 0) {
    protocol_ = std::make_unique<EpochProtocol>(*this, *epochs_, options_.epoch_log, options_.log_epoch_interval);
    if (absl::Status s = protocol_->Install(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void TxnThread::After(absl::Duration delay, std::function<void()> task) {
  timers_.emplace_back(clock_->Now() + delay, std::move(task));
}

void TxnThread::SendUntilWritten(uint32_t node, msg::MessageType type, std::string message,
                                 std::function<void(bool)> done, absl::Time give_up, std::function<void()> if_lost,
                                 std::function<bool()> still_wanted) {
  if (!replicas().IsMember(node) || clock_->Now() >= give_up || (still_wanted && !still_wanted())) return done(false);
  ++stats_.resends;
  auto bytes = std::make_shared<const std::string>(std::move(message));
  auto again = [this, node, type, bytes, done, give_up, if_lost, still_wanted] {
    Owe(node, [this, node, type, bytes, done, give_up, if_lost, still_wanted] {
      SendUntilWritten(node, type, *bytes, done, give_up, if_lost, still_wanted);
    });
  };
  msg::SendOptions options;
  options.on_written = [again, done](absl::Status written) {
    if (written.ok()) return done(true);
    again();  // the connection failed or was replaced: it is made again meanwhile
  };
  if (if_lost) options.on_lost = [if_lost](absl::Status) { if_lost(); };
  // Not while this node's lease is lapsed: it may have been removed, and a member that has not fenced the
  // removal would take what the others refuse (CommitOperation::WhenLeased).
  if (options_.lease_lapsed && options_.lease_lapsed()) return again();
  if (absl::Status sent = messenger().Send(node, type, *bytes, std::move(options)); !sent.ok()) return again();
  messenger().Flush().IgnoreError();  // a failure reaches on_written
}

void TxnThread::Owe(uint32_t node, std::function<void()> send) {
  const uint64_t ticket = next_owed_ticket_++;
  owed_[node].emplace(ticket, std::move(send));
  After(options_.resend_interval, [this, node, ticket] {
    auto peer = owed_.find(node);
    if (peer == owed_.end()) return;
    auto it = peer->second.find(ticket);
    if (it == peer->second.end()) return;  // already sent on a new connection
    std::function<void()> send = std::move(it->second);
    peer->second.erase(it);
    if (peer->second.empty()) owed_.erase(peer);
    send();
  });
}

void TxnThread::SendOwed(uint32_t node) {
  auto peer = owed_.find(node);
  if (peer == owed_.end()) return;
  std::map<uint64_t, std::function<void()>> sends = std::move(peer->second);
  owed_.erase(peer);
  for (auto& [ticket, send] : sends) send();  // in the order they were owed; a failure owes them again
}

std::function<void()> TxnThread::Redeliver(uint32_t node, msg::MessageType type, std::string message,
                                           std::optional<TxnId> truncate) {
  return [this, node, type, bytes = std::make_shared<const std::string>(std::move(message)), truncate] {
    ++stats_.redeliveries;
    SendUntilWritten(
        node, type, *bytes,
        [this, node, truncate](bool written) {
          if (written && truncate.has_value()) truncator_.Add(node, truncate->epoch, truncate->counter, clock_->Now());
        },
        absl::InfiniteFuture(), Redeliver(node, type, *bytes, truncate));
  };
}

uint64_t TxnThread::RegionBytes(uint32_t region) {
  // A backup of the region by the configuration, sized by it: accepting a COMMIT-BACKUP (and applying it
  // at truncation) must not depend on a connection to the primary, since the coordinator already counts
  // the record as one of the f+1 copies once it is in this node's memory.
  // A backup promoted to the region's primary still applies the records it kept as a backup, once they
  // are truncated (promotion.cc waits for them before it serves the region).
  auto holders = replicas().ReplicasOf(region);
  if (!holders.ok()) return 0;
  const bool promoted = holders->primary == node_id_ && memory::OwnerOfRegion(region) != node_id_;
  if (!promoted && std::find(holders->backups.begin(), holders->backups.end(), node_id_) == holders->backups.end()) {
    return 0;
  }
  if (holders->bytes != 0) return holders->bytes;
  // A static cluster's map (ByOwner) records no sizes: the primary's region as it published it.
  auto route = thread_->RouteTo(region);
  return route.ok() ? route->region->length : 0;
}

const memory::RegionMap& TxnThread::replicas() { return thread_->region_map(); }

TxnId TxnThread::NextId() {
  const TxnId id{replicas().epoch(), node_id_, index(), next_counter_++};
  if (incarnation_ == 0) incarnation_ = id.epoch;
  unsettled_.insert(id.counter);
  return id;
}

size_t TxnThread::ForgetAfterRemoval() {
  incarnation_ = 0;
  unsettled_.clear();
  return participant_.ForgetAfterRemoval();
}

void TxnThread::Settle(uint64_t counter) {
  auto it = unsettled_.find(counter);
  if (it == unsettled_.end()) return;
  const bool oldest = it == unsettled_.begin();
  unsettled_.erase(it);
  // Remote participants hear the mark with the next record; ours at once.
  if (oldest) participant_.OnMark(node_id_, index(), mark());
}

std::shared_ptr<TxState> TxnThread::Begin() {
  auto tx = std::make_shared<TxState>();
  tx->thread = thread_->index();
  return tx;
}

absl::StatusOr<const std::string*> TxnThread::NoteRead(TxState& tx, const object::ObjectRef& ref, uint64_t version,
                                                       std::span<const std::byte> payload) {
  auto [it, inserted] = tx.reads.try_emplace(ref.address.raw(), ReadEntry{ref, version, std::nullopt});
  if (!inserted && it->second.version != version) {
    stats_.CountAbort(AbortReason::kRead);
    return absl::AbortedError(absl::StrCat(ref.address.ToString(), " changed between two reads of the transaction"));
  }
  it->second.payload = ToString(payload);
  return &*it->second.payload;
}

absl::Status TxnThread::AddRead(TxState& tx, const object::ObjectRef& ref, uint64_t version,
                                std::span<const std::byte> payload) {
  if (tx.finished) return absl::FailedPreconditionError("the transaction is finished");
  if (absl::Status s = CheckRef(ref); !s.ok()) return s;
  if (payload.size() > ref.payload_capacity()) {
    return absl::InvalidArgumentError(absl::StrCat(payload.size(), " bytes do not fit in ", ref.address.ToString()));
  }
  if (tx.writes.contains(ref.address.raw())) return absl::OkStatus();  // its reads see the write
  if (auto r = tx.reads.find(ref.address.raw()); r != tx.reads.end() && !(r->second.ref == ref)) {
    return absl::InvalidArgumentError("two references to one slot");
  }
  return NoteRead(tx, ref, version, payload).status();
}

void TxnThread::Read(TxState& tx, const object::ObjectRef& ref, ReadCallback done) {
  if (tx.finished) return done(absl::FailedPreconditionError("the transaction is finished"));
  if (absl::Status s = CheckRef(ref); !s.ok()) return done(s);
  if (auto w = tx.writes.find(ref.address.raw()); w != tx.writes.end()) {
    if (!(w->second.ref == ref)) return done(absl::InvalidArgumentError("two references to one slot"));
    if (w->second.op == WriteOp::kFree) {
      return done(absl::NotFoundError(absl::StrCat(ref.address.ToString(), " was freed by this transaction")));
    }
    return done(w->second.payload);
  }
  // Read before in this transaction: the same snapshot again, without a round trip (an update reads a
  // bucket and its value object to find the key, then again to change it).
  if (auto r = tx.reads.find(ref.address.raw()); r != tx.reads.end() && r->second.payload.has_value() &&
                                                 r->second.ref == ref) {
    ++stats_.repeated_reads;
    return done(*r->second.payload);
  }
  auto primary = replicas().PrimaryOf(ref.address.region);
  if (!primary.ok()) return done(absl::UnavailableError(primary.status().message()));
  if (*primary == node_id_) return ReadLocal(tx, ref, std::move(done));
  auto route = thread_->RouteTo(ref.address.region);
  if (!route.ok()) return done(route.status());
  ++stats_.execution_reads;
  const absl::Time posted = clock_->Now();
  // The transaction state outlives the read: the caller keeps it until the callback has run.
  absl::Status started = thread_->reader().ReadVersioned(
      *route->endpoint, *route->region, ref,
      [this, &tx, ref, done, posted](absl::StatusOr<object::VersionedObject> object) {
        stats_.remote_read_latency.Record(clock_->Now() - posted);
        if (!object.ok()) {
          // A reference whose object moved on is the application's to handle; a locked object that stays
          // locked is a conflict.
          if (absl::IsUnavailable(object.status())) {
            stats_.CountAbort(AbortReason::kRead);
            return done(absl::AbortedError(object.status().message()));
          }
          return done(object.status());
        }
        absl::StatusOr<const std::string*> kept = NoteRead(tx, ref, object->header.version(), object->payload);
        if (!kept.ok()) return done(kept.status());
        done(**kept);
      });
  // Too many reads in flight on this thread's worker is transient, like a full ring: the caller retries
  // the transaction (Aborted) rather than taking it for memory exhausted.
  if (absl::IsResourceExhausted(started)) {
    stats_.CountAbort(AbortReason::kRead);
    return done(absl::AbortedError(absl::StrCat("read of ", ref.address.ToString(), " not started: ", started.message())));
  }
  if (!started.ok()) done(started);
}

void TxnThread::ReadMany(std::shared_ptr<TxState> tx, const std::vector<object::ObjectRef>& refs,
                         std::function<void(absl::StatusOr<std::vector<std::string>>)> done) {
  struct Gather {
    std::vector<std::string> values;
    size_t left;
    absl::Status first_error;
  };
  if (refs.empty()) return done(std::vector<std::string>{});
  auto gather = std::make_shared<Gather>(Gather{std::vector<std::string>(refs.size()), refs.size(), {}});
  for (size_t i = 0; i < refs.size(); ++i) {
    // The callback holds the transaction state: Read needs it alive until then.
    Read(*tx, refs[i], [tx, gather, i, done](absl::StatusOr<std::string> r) {
      if (r.ok()) {
        gather->values[i] = std::move(*r);
      } else if (gather->first_error.ok()) {
        gather->first_error = r.status();
      }
      if (--gather->left > 0) return;
      if (!gather->first_error.ok()) return done(gather->first_error);
      done(std::move(gather->values));
    });
  }
}

void TxnThread::ReadLocal(TxState& tx, const object::ObjectRef& ref, ReadCallback done) {
  ++stats_.local_reads;
  ReadLocalAttempt(tx, ref, std::move(done), clock_->Now() + options_.locked_read_timeout);
}

void TxnThread::ReadLocalAttempt(TxState& tx, const object::ObjectRef& ref, ReadCallback done, absl::Time give_up) {
  auto object = thread_->store().Resolve(ref);
  if (absl::IsNotFound(object.status())) {
    // The placement names this node primary of a region it does not serve yet: it is taking the region
    // over (a promotion waits for pending commits and members' word): soon served, so asked again.
    return done(absl::UnavailableError(
        absl::StrCat(object.status().message(), " yet: this node is taking over region ", ref.address.region)));
  }
  if (!object.ok()) return done(absl::InvalidArgumentError(object.status().message()));
  if (local_buffer_.size() < ref.capacity) local_buffer_.resize(ref.capacity);
  std::span<std::byte> copy(local_buffer_.data(), ref.capacity);
  object->CopyTo(copy);
  object::ObjectCheck check = object::CheckObjectCopy(copy, ref);
  if (check.verdict == object::Verdict::kValid) {
    absl::StatusOr<const std::string*> kept = NoteRead(tx, ref, check.header.version(), check.payload);
    if (!kept.ok()) return done(kept.status());
    return done(**kept);
  }
  if (!object::IsRetryable(check.verdict)) return done(object::VerdictStatus(check.verdict, ref));
  if (clock_->Now() >= give_up) {
    stats_.CountAbort(AbortReason::kRead);
    return done(absl::AbortedError(absl::StrCat(ref.address.ToString(), " stayed locked")));
  }
  // The lock holder may need this very thread (its COMMIT-PRIMARY may be waiting in our ring): look again
  // after the loop has polled.
  ++stats_.local_read_retries;
  thread_->Post([this, &tx, ref, done = std::move(done), give_up]() mutable {
    ReadLocalAttempt(tx, ref, std::move(done), give_up);
  });
}

absl::Status TxnThread::Write(TxState& tx, const object::ObjectRef& ref, std::string_view bytes) {
  if (tx.finished) return absl::FailedPreconditionError("the transaction is finished");
  if (absl::Status s = CheckRef(ref); !s.ok()) return s;
  if (bytes.size() > ref.payload_capacity()) {
    return absl::InvalidArgumentError(absl::StrCat(bytes.size(), " bytes do not fit in ", ref.address.ToString(),
                                                   ", which holds ", ref.payload_capacity()));
  }
  auto [it, inserted] = tx.writes.try_emplace(ref.address.raw(), BufferedWrite{ref, WriteOp::kWrite, {}});
  if (!(it->second.ref == ref)) return absl::InvalidArgumentError("two references to one slot");
  if (it->second.op == WriteOp::kFree) {
    return absl::NotFoundError(absl::StrCat(ref.address.ToString(), " was freed by this transaction"));
  }
  it->second.payload.assign(bytes.data(), bytes.size());
  return absl::OkStatus();
}

absl::Status TxnThread::Free(TxState& tx, const object::ObjectRef& ref) {
  if (tx.finished) return absl::FailedPreconditionError("the transaction is finished");
  if (absl::Status s = CheckRef(ref); !s.ok()) return s;
  auto it = tx.writes.find(ref.address.raw());
  if (it != tx.writes.end() && it->second.op == WriteOp::kAlloc) {
    // Allocated and freed by the same transaction: it never existed.
    for (size_t i = 0; i < tx.reserved.size(); ++i) {
      if (tx.reserved[i] == ref) {
        ReleaseReserved(ref);
        tx.reserved.erase(tx.reserved.begin() + i);
        break;
      }
    }
    tx.writes.erase(it);
    return absl::OkStatus();
  }
  if (it != tx.writes.end() && it->second.op == WriteOp::kFree) {
    return absl::NotFoundError(absl::StrCat(ref.address.ToString(), " was freed by this transaction"));
  }
  tx.writes[ref.address.raw()] = BufferedWrite{ref, WriteOp::kFree, {}};
  return absl::OkStatus();
}

void TxnThread::Alloc(std::shared_ptr<TxState> tx, uint32_t payload_capacity, uint32_t node, RefCallback done) {
  if (tx->finished) return done(absl::FailedPreconditionError("the transaction is finished"));
  if (payload_capacity == 0 || payload_capacity > memory::kMaxSlotBytes - object::kHeaderBytes) {
    return done(absl::InvalidArgumentError(absl::StrCat("cannot allocate ", payload_capacity, " bytes")));
  }
  if (node == 0) node = node_id_;
  // A slot the transaction read or wrote under an earlier incarnation was freed since, by another commit:
  // what it read is stale (with reads answered from the read set, nothing else would say so before
  // LOCK). The slot goes back at once; Aborted.
  auto note = [this, tx](const object::ObjectRef& ref) -> absl::StatusOr<object::ObjectRef> {
    if (tx->reads.contains(ref.address.raw()) || tx->writes.contains(ref.address.raw())) {
      ReleaseReserved(ref);
      stats_.CountAbort(AbortReason::kRead);
      return absl::AbortedError(
          absl::StrCat(ref.address.ToString(), " was freed and reused since this transaction read it"));
    }
    tx->reserved.push_back(ref);  // the transaction's to give back if it aborts
    tx->writes[ref.address.raw()] = BufferedWrite{ref, WriteOp::kAlloc, {}};
    return ref;
  };
  if (node == node_id_) {
    auto ref = ReserveHere(payload_capacity, node_id_, replicas().epoch());
    if (!ref.ok()) return done(ref);
    return done(note(*ref));
  }
  // Another node's memory: a spare slot reserved there earlier, or wait for the next batch.
  DropSparesOfEarlierMembership();
  const int size_class = memory::SizeClassFor(uint64_t{payload_capacity} + object::kHeaderBytes);
  auto still_served = [this, node](const object::ObjectRef& ref) {
    auto primary = replicas().PrimaryOf(ref.address.region);
    return primary.ok() && *primary == node;
  };
  if (std::optional<object::ObjectRef> spare = spares_.Take(node, size_class, still_served)) {
    return done(note(*spare));
  }
  auto deliver = [this, tx, note, done, node, size_class](absl::StatusOr<object::ObjectRef> ref) {
    if (!ref.ok()) return done(ref.status());
    if (tx->finished) {  // aborted meanwhile: the slot waits for the next transaction
      spares_.Put(node, size_class, *ref);
      return done(absl::FailedPreconditionError("the transaction finished while its allocation was made"));
    }
    done(note(*ref));
  };
  if (spares_.Wait(node, size_class, std::move(deliver))) AskForSpares(node, size_class);
}

void TxnThread::AskForSpares(uint32_t node, int size_class) {
  DropSparesOfEarlierMembership();
  const uint32_t count = spares_.Asking(node, size_class);
  const uint32_t payload_capacity = memory::SlotBytes(size_class) - object::kHeaderBytes;
  ++stats_.alloc_messages;
  const uint64_t asked_as = spares_joined_epoch_;
  absl::Status posted = thread_->messenger().Call(
      node, kAllocMessage, EncodeAllocRequest({payload_capacity, count, replicas().epoch()}), options_.rpc_timeout,
      [this, node, size_class, count, payload_capacity, asked_as](absl::StatusOr<std::string_view> reply) {
        absl::StatusOr<std::vector<object::ObjectRef>> refs =
            reply.ok() ? DecodeAllocReply(*reply, count, payload_capacity)
                       : absl::StatusOr<std::vector<object::ObjectRef>>(reply.status());
        // Asked as an earlier membership of this node: the owner frees those slots itself.
        if (refs.ok() && replicas().JoinedEpoch(node_id_) != asked_as) {
          refs = absl::AbortedError(absl::StrCat("slots on node ", node, " were reserved for node ", node_id_,
                                                 " before it was admitted again: retry"));
        }
        if (spares_.Fill(node, size_class, std::move(refs))) AskForSpares(node, size_class);
      });
  // A full ring (or too many calls in flight) to the owner is transient, like a full log at LOCK: the
  // caller retries the transaction (Aborted) rather than taking it for memory exhausted.
  if (absl::IsResourceExhausted(posted)) {
    posted = absl::AbortedError(absl::StrCat("allocation request to node ", node, " not sent: ", posted.message()));
  }
  if (!posted.ok()) spares_.Fill(node, size_class, posted);  // fails every waiter: nothing to ask again
}

void TxnThread::ReleaseReserved(const object::ObjectRef& ref) {
  const uint32_t owner = MemoryOwnerOf(ref);
  if (owner == node_id_) {
    participant_.Release(ref, node_id_).IgnoreError();  // fails only for a slot not reserved: nothing to undo
    return;
  }
  // Best effort: if the owner is unreachable, its slot stays reserved until it restarts.
  thread_->messenger().Send(owner, kReleaseMessage, EncodeRef(ref)).IgnoreError();
}

void TxnThread::Abort(TxState& tx) {
  if (tx.finished) return;
  tx.finished = true;
  ReleaseReservations(tx);
}

void TxnThread::ReleaseReservations(TxState& tx) {
  for (const object::ObjectRef& ref : tx.reserved) ReleaseReserved(ref);
  tx.reserved.clear();
}

void TxnThread::Commit(std::shared_ptr<TxState> tx, DoneCallback done) {
  if (tx->finished) return done(absl::FailedPreconditionError("the transaction is finished"));
  tx->finished = true;
  ++stats_.started;
  if (tx->writes.empty()) return CommitOperation::Start(*this, std::move(tx), /*sync=*/false, std::move(done));
  const bool sync = tx->durability.value_or(options_.durability) == Durability::kSync;
  if (sync && epochs_ == nullptr) {
    ReleaseReservations(*tx);
    stats_.CountAbort(AbortReason::kOther);
    return done(absl::FailedPreconditionError(
        "sync durability needs the SSD log on every node (TxnOptions::epoch_log: log epochs)"));
  }
  CommitOperation::Start(*this, std::move(tx), sync, std::move(done));
}

absl::Status TxnThread::OnRecord(const msg::Message& message, std::string* reply) {
  auto record = DecodeRecord(message.payload);
  if (!record.ok()) return record.status();
  // A coordinator speaks only for itself, from the thread whose ring this is.
  if (record->id.node != message.peer || record->id.thread != index()) {
    return absl::InvalidArgumentError(absl::StrCat(record->id.ToString(), " arrived from node ", message.peer,
                                                   " on thread ", index()));
  }
  const RecordKind expected = message.type == kLockMessage           ? RecordKind::kLock
                              : message.type == kCommitBackupMessage ? RecordKind::kCommitBackup
                              : message.type == kCommitPrimaryMessage ? RecordKind::kCommitPrimary
                              : message.type == kCommitPrimaryAgainMessage ? RecordKind::kCommitPrimary
                              : message.type == kAbortMessage        ? RecordKind::kAbort
                                                                     : RecordKind::kTruncate;
  if (record->kind != expected) return absl::InvalidArgumentError("record kind does not match the message type");
  if ((reply != nullptr) != (message.type == kLockMessage)) {
    return absl::InvalidArgumentError("lock records are requests, the others one-way messages");
  }
  const RecordKind kind = record->kind;
  absl::Status handled = HandleRecord(message.type, std::move(*record), reply);
  if (handled.ok() && options_.on_record) options_.on_record(kind);  // tests: a fault before the reply
  return handled;
}

absl::Status TxnThread::HandleRecord(msg::MessageType type, Record record, std::string* reply) {
  // Once this node has fenced a configuration that removed the coordinator after the transaction began,
  // recovery decides the transaction from what the members held then (the drain of the old connection
  // came before the fence). A record arriving later (the coordinator, paused or cut off, admitted again
  // and sending over its new connection, or its truncations and mark) would change a decided transaction:
  // a backup applying a write its primary never got (issue 58, path 4; random_faults seed 9395).
  if (thread_->fenced_epoch() >= replicas().epoch() && CoordinatorGoneAt(record.id.node, record.id.epoch)) {
    participant_.CountRefusedOfGone();
    return absl::UnavailableError(
        absl::StrCat(record.id.ToString(), ": its coordinator left configuration ", record.id.epoch,
                     " (node ", node_id_, " is at ", replicas().epoch(), "): recovery decides it"));
  }
  // The mark first: truncated ids it settles need no tombstone.
  participant_.OnMark(record.id.node, record.id.thread, record.mark);
  participant_.Truncate(record.id.epoch, record.id.node, record.id.thread, record.truncated);
  switch (record.kind) {
    case RecordKind::kLock: {
      if (record.id.epoch != replicas().epoch()) {
        return absl::AbortedError(absl::StrCat(record.id.ToString(), " is from another configuration (now ",
                                               replicas().epoch(), ")"));
      }
      auto grant = participant_.Lock(record);
      if (!grant.ok()) return grant.status();
      *reply = EncodeLockReply(*grant);
      return absl::OkStatus();
    }
    case RecordKind::kCommitBackup:
      return participant_.CommitBackup(std::move(record));
    case RecordKind::kCommitPrimary:
      if (type == kCommitPrimaryAgainMessage) return participant_.CommitPrimaryAgain(record.id);
      return participant_.CommitPrimary(record.id);
    case RecordKind::kAbort:
      participant_.Abort(record.id);
      return absl::OkStatus();
    case RecordKind::kTruncate:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status TxnThread::OnAlloc(const msg::Message& message, std::string* reply) {
  if (reply == nullptr) return absl::InvalidArgumentError("an allocation must be a request");
  ASSIGN_OR_RETURN(AllocRequest request, DecodeAllocRequest(message.payload));
  // Slots reserved now would outlive the pass that frees the gone incarnation's (it may have run).
  if (CoordinatorGoneAt(message.peer, request.epoch)) {
    return absl::AbortedError(absl::StrCat("allocation for node ", message.peer, " of configuration ",
                                           request.epoch, ", which it has left since (now ", replicas().epoch(),
                                           "): retry"));
  }
  std::vector<object::ObjectRef> refs;
  for (uint32_t i = 0; i < request.count; ++i) {
    auto ref = ReserveHere(request.payload_capacity, message.peer, request.epoch);
    if (!ref.ok()) {
      if (refs.empty()) return ref.status();
      break;  // memory ran out part-way: the ones made are the answer
    }
    refs.push_back(*ref);
  }
  *reply = EncodeAllocReply(refs);
  return absl::OkStatus();
}

bool TxnThread::CoordinatorGoneAt(uint32_t coordinator, uint64_t epoch) {
  const memory::RegionMap& map = replicas();
  return epoch <= map.epoch() && map.CoordinatorGone(coordinator, epoch);
}

void TxnThread::DropSparesOfEarlierMembership() {
  const uint64_t joined = replicas().JoinedEpoch(node_id_);
  if (joined == spares_joined_epoch_) return;
  spares_.DropKept();
  spares_joined_epoch_ = joined;
}

size_t TxnThread::ReleaseSlotsOfGoneCoordinators() {
  if (participant_.reserved() == 0) return 0;
  const memory::RegionMap& map = replicas();
  if (map.epoch() == reservations_checked_epoch_ && !recheck_reservations_) return 0;
  // What a coordinator that left wrote into this node's rings (an ALLOC, a LOCK) is handled only once the
  // node has fenced the configuration that says it left.
  if (thread_->fenced_epoch() < map.epoch()) return 0;
  reservations_checked_epoch_ = map.epoch();
  size_t kept = 0;
  const size_t freed = participant_.ReleaseReservationsOfGone(
      [this](uint32_t node, uint64_t epoch) { return CoordinatorGoneAt(node, epoch); }, &kept);
  // Slots that LOCKs of gone coordinators allocate wait for recovery's decision: look again later.
  recheck_reservations_ = false;
  if (kept > 0) After(absl::Seconds(1), [this] { recheck_reservations_ = true; });
  return freed;
}

absl::StatusOr<object::ObjectRef> TxnThread::ReserveHere(uint32_t payload_capacity, uint32_t coordinator,
                                                         uint64_t epoch) {
  auto ref = participant_.Reserve(payload_capacity, coordinator, epoch);
  if (absl::IsResourceExhausted(ref.status())) {
    // No object size in the text: a load's errors group by message (one line per node).
    return absl::ResourceExhaustedError(absl::StrCat("node ", node_id_, " is out of memory (", ref.status().message(),
                                                     "; freed slots of smaller sizes are not reused): give the "
                                                     "nodes more --memory, or add nodes"));
  }
  if (!ref.ok()) return ref;
  // After this node failed and came back, recovery gave its regions to other nodes: a slot here would be
  // committed at their primary, which did not reserve it.
  auto primary = replicas().PrimaryOf(ref->address.region);
  if (!primary.ok() || *primary != node_id_) {
    participant_.Release(*ref, coordinator).IgnoreError();
    return absl::UnavailableError(absl::StrCat("node ", node_id_, " serves none of its own memory (recovery gave region ",
                                               ref->address.region, " to node ", primary.ok() ? *primary : 0,
                                               "): allocate on another node"));
  }
  return ref;
}

uint32_t TxnThread::NodeServing(const object::ObjectRef& ref) {
  auto primary = replicas().PrimaryOf(ref.address.region);
  return primary.ok() ? *primary : memory::OwnerOfRegion(ref.address.region);
}

absl::Status TxnThread::OnRelease(const msg::Message& message) {
  auto ref = DecodeRef(message.payload);
  if (!ref.ok()) return ref.status();
  if (MemoryOwnerOf(*ref) != node_id_) return absl::InvalidArgumentError("release of another node's slot");
  return participant_.Release(*ref, message.peer);
}

}  // namespace fathom::txn
