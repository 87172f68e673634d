// kv::Table on node threads: the lock-free GET and the asynchronous PUT/DELETE.
//
// GET reads the key's first bucket (hopscotch: home; cuckoo: first candidate) with a one-sided read
// outside any transaction (lock_free_read.h). A hit there needs nothing more: one object copy checked
// whole is a consistent snapshot by itself (an out-of-line value found there is read lock-free too). On
// a miss it reads the buckets the index names next (MoreBuckets), one at a time, in a read-only
// transaction that holds the first bucket's version too, and stops at the first hit (a hit in any one
// bucket is again a snapshot of that key). A miss over several buckets is validated by committing that
// transaction (the versions of everything it read are read again, one-sided): a key moving between two
// buckets while they were read one after the other could otherwise be missed in both. It scans the raw
// bytes in place without decoding, so a hit allocates only the value.
//
// Over tcp, where a one-sided read is itself a request the owner's CPU serves, the GET asks the owner of
// its home bucket for the lookup instead (get_at_owner.h): the value in one round trip, or the bucket's
// checked copy to go on from as if it had read it.
//
// Resize: every bucket read is checked against the generation the GET holds (its epoch word). A bucket
// retired by a resize (a newer epoch) rejects the read: the GET refetches the table from the catalog and
// starts again on the new generation, or, if the resize has not published yet, waits and retries. A
// bucket that has been freed (a generation retired and given back) reads as a stale reference: the GET
// refetches too. Why a GET that passed the check is not stale: docs/formats/kv.md, "Resize".
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kv/fetch_at_owner.h"
#include "kv/get_at_owner.h"
#include "kv/kv.h"
#include "kv/lock_free_read.h"
#include "kv/operation.h"
#include "kv/table_moved.h"
#include "kv/thread_views.h"

namespace fathom::kv {
namespace {

constexpr int kGetAttempts = 32;
constexpr int kMutateAttempts = 64;

// A lock-free read's Unavailable (an object that stayed locked or torn through the reader's retries) is a
// conflict to retry, as TxnThread::Read reports it.
absl::Status ConflictIsAborted(const absl::Status& s) {
  return absl::IsUnavailable(s) ? absl::AbortedError(s.message()) : s;
}

class GetRun : public std::enable_shared_from_this<GetRun> {
 public:
  GetRun(txn::TxnThread& thread, ThreadViews::View view, std::string_view key, std::function<void(GetResult)> done,
         std::shared_ptr<const Table::GetPause> pause)
      : thread_(thread), handle_(std::move(view.handle)), table_(std::move(view.state)), key_(key), hash_(KeyHash(key_)),
        done_(std::move(done)), pause_(std::move(pause)) {}

  // The first bucket is read outside any transaction (lock_free_read.h), or, where reads are served by
  // the owner's CPU anyway, the owner is asked for the whole lookup (get_at_owner.h); a transaction begins
  // only when the GET needs more than that bucket to answer a miss (EnsureTransaction).
  void Start() {
    tx_ = nullptr;
    tx_open_ = false;
    objects_read_ = 0;
    const uint64_t home = table_->index->Home(hash_);
    if (!AskOwner(home)) ReadHome(home);
  }

 private:
  void ReadHome(uint64_t home) {
    ++reads_;
    ++objects_read_;
    auto self = shared_from_this();
    auto started = ReadLockFree(thread_, table_->bucket_refs[home],
                                [self](absl::StatusOr<object::VersionedObject> copy) { self->OnHome(copy); });
    if (!started.ok()) return Retry(started.status());
    if (*started == LockFreeRead::kLocalBusy) {
      // Locked by a writer (perhaps one waiting for this thread): read it in a transaction, which waits.
      --reads_;
      objects_read_ = 0;
      tx_ = thread_.Begin();
      tx_open_ = true;
      ReadBucket(home, /*first=*/true);
    }
  }

  // Over tcp a one-sided read is itself a request the owner's CPU answers: ask the owner for the lookup
  // instead (a fabric call, in the batch the reads would travel in), one round trip where a key whose
  // value is out of line takes two. False: not asked (a local or truly one-sided bucket), read it.
  bool AskOwner(uint64_t home) {
    const object::ObjectRef& ref = table_->bucket_refs[home];
    node::NodeThread& node_thread = thread_.thread();
    const std::optional<node::NodeThread::Route> route = RouteToServingOwner(node_thread, thread_.node_id(), ref);
    if (!route.has_value()) return false;
    const std::string request = EncodeGetAtOwnerRequest(ref, table_->epoch_word(), key_);
    auto self = shared_from_this();
    const absl::Status called = node_thread.reader().Call(
        *route->endpoint, kGetAtOwnerCall, absl::MakeConstSpan(reinterpret_cast<const std::byte*>(request.data()), request.size()),
        // Only the shared_ptr is captured: a callback of two pointers is kept without allocating.
        OwnerAnswerCapacity(ref), [self](absl::StatusOr<std::span<const std::byte>> reply) {
          self->OnOwnerAnswer(reply.ok() ? absl::StatusOr<std::string_view>(std::string_view(
                                               reinterpret_cast<const char*>(reply->data()), reply->size()))
                                         : reply.status());
        });
    if (!called.ok()) return false;
    ++reads_;
    ++objects_read_;
    return true;
  }

  void OnOwnerAnswer(const absl::StatusOr<std::string_view>& reply) {
    absl::StatusOr<OwnerAnswer> answer = reply.ok() ? DecodeOwnerAnswer(*reply) : reply.status();
    if (answer.ok() && answer->kind == OwnerAnswerKind::kValue) return Finish(std::string(answer->bytes));
    if (answer.ok() && answer->kind == OwnerAnswerKind::kBucket) return OnHomeBytes(answer->bytes, answer->version);
    // Not served, or no answer (a node that does not serve it, a connection that failed): read the bucket
    // as if the owner had not been asked; that read meets whatever is wrong and says so.
    objects_read_ = 0;
    ReadHome(table_->index->Home(hash_));  // table_ is still this attempt's: only a retry replaces it
  }

  // The first bucket, read lock-free: answered in place when it holds the key (the common case); copied
  // and handed to Scan when an out-of-line value or more buckets must be read.
  void OnHome(const absl::StatusOr<object::VersionedObject>& copy) {
    if (!copy.ok()) return Retry(ConflictIsAborted(copy.status()));
    OnHomeBytes(std::string_view(reinterpret_cast<const char*>(copy->payload.data()), copy->payload.size()),
                copy->header.version());
  }

  void OnHomeBytes(std::string_view bytes, uint64_t version) {
    if (absl::Status s = CheckEpoch(bytes); !s.ok()) return IsTableMoved(s) ? Retry(s) : Finish(s);
    home_version_ = version;
    for (size_t from = 0;;) {
      auto m = FindInBucket(bytes, hash_, from);
      if (!m.ok()) return Finish(m.status());
      if (m->offset == std::string_view::npos) break;
      from = m->next;
      if (m->key_bytes != key_.size()) continue;
      if (!m->is_inline) break;  // Scan reads the value object
      if (m->key == key_) return Finish(std::string(m->value));
    }
    bucket_.assign(bytes);
    Scan(/*first=*/true, 0);
  }

  // A transaction for the reads after the first bucket, with the first bucket's read in its read set as
  // if the transaction had made it, so committing it validates every bucket the GET read.
  void EnsureTransaction() {
    if (tx_ != nullptr) return;
    tx_ = thread_.Begin();
    tx_open_ = true;
    const object::ObjectRef& home = table_->bucket_refs[table_->index->Home(hash_)];
    tx_->reads.try_emplace(home.address.raw(), txn::ReadEntry{home, home_version_});
  }

  absl::Status CheckEpoch(std::string_view bucket) const {
    auto epoch = BucketEpoch(bucket);
    if (!epoch.ok()) return epoch.status();
    if (*epoch != table_->epoch_word()) {
      return TableMovedError(absl::StrCat("bucket of epoch ", *epoch, ", GET holds epoch ", table_->epoch()));
    }
    return absl::OkStatus();
  }

  void ReadOne(const object::ObjectRef& ref, std::function<void(absl::StatusOr<std::string>)> then) {
    ++reads_;
    ++objects_read_;
    EnsureTransaction();
    thread_.Read(*tx_, ref, std::move(then));
  }

  void ReadBucket(uint64_t bucket, bool first) {
    auto self = shared_from_this();
    ReadOne(table_->bucket_refs[bucket], [self, first](absl::StatusOr<std::string> bytes) {
      if (!bytes.ok()) return self->Retry(bytes.status());
      if (absl::Status s = self->CheckEpoch(*bytes); !s.ok()) {
        return IsTableMoved(s) ? self->Retry(s) : self->Finish(s);
      }
      self->bucket_ = std::move(*bytes);
      self->Scan(first, 0);
    });
  }

  void Scan(bool first, size_t from) {
    for (;;) {
      auto m = FindInBucket(bucket_, hash_, from);
      if (!m.ok()) return Finish(m.status());
      if (m->offset == std::string_view::npos) break;
      from = m->next;
      if (m->key_bytes != key_.size()) continue;
      if (m->is_inline) {
        if (m->key == key_) return Finish(std::string(m->value));
        continue;
      }
      // Out of line: one more read, checked against the pointer's length and checksum. A value object
      // never changes in place (a PUT writes a new one and frees the old: a stale reference fails the
      // read), so it needs no validation: read lock-free unless the GET has a transaction already.
      auto self = shared_from_this();
      const uint32_t value_bytes = m->value_bytes;
      const std::optional<uint64_t> checksum = m->checksum;
      auto on_payload = [self, first, from, value_bytes, checksum](absl::StatusOr<std::string_view> payload) {
        // A freed or reused object: the bucket changed after we read it. Start again.
        if (!payload.ok()) return self->Retry(payload.status());
        auto value = CheckValueObject(*payload, self->key_, value_bytes, checksum);
        if (absl::IsNotFound(value.status())) return self->Scan(first, from);  // a hash collision
        if (!value.ok()) return self->Retry(value.status());
        self->Finish(std::string(*value));
      };
      if (tx_ == nullptr) {
        ++reads_;
        ++objects_read_;
        auto started = ReadLockFree(thread_, m->ref, [on_payload](absl::StatusOr<object::VersionedObject> copy) {
          if (!copy.ok()) return on_payload(ConflictIsAborted(copy.status()));
          on_payload(std::string_view(reinterpret_cast<const char*>(copy->payload.data()), copy->payload.size()));
        });
        if (started.ok() && *started == LockFreeRead::kStarted) return;
        --reads_;
        --objects_read_;
        if (!started.ok()) return Retry(started.status());
        // Found locked locally: read it through the transaction, which waits for the writer.
      }
      ReadOne(m->ref, [on_payload](absl::StatusOr<std::string> payload) {
        if (!payload.ok()) return on_payload(payload.status());
        on_payload(std::string_view(*payload));
      });
      return;
    }
    if (first) {
      auto more = table_->index->MoreBuckets(hash_, bucket_);
      if (!more.ok()) return Finish(more.status());
      next_ = std::move(*more);
      next_index_ = 0;
    }
    if (next_index_ < next_.size() && first && pause_ != nullptr) {
      auto self = shared_from_this();
      auto pause = std::move(pause_);  // once per GET
      return (*pause)(thread_, [self] { self->ReadNextOrValidate(); });
    }
    ReadNextOrValidate();
  }

  void ReadNextOrValidate() {
    if (next_index_ < next_.size()) {
      const uint64_t b = next_[next_index_++];
      return ReadBucket(b, /*first=*/false);
    }
    // Without a transaction only the home bucket was read (and maybe a value object for a hash collision,
    // which never changes): that one snapshot says the key is absent.
    if (objects_read_ == 1 || tx_ == nullptr) return Finish(Absent());
    // Absent from every bucket, each at its own moment: commit the read-only transaction, which checks
    // that none of them changed since, so the key was absent from all at once.
    reads_ += objects_read_;
    auto self = shared_from_this();
    tx_open_ = false;
    thread_.Commit(tx_, [self](absl::Status s) {
      if (s.ok()) return self->Finish(self->Absent());
      self->Retry(s);
    });
  }

  // "No such key", with where the home bucket was read: a miss of a key that should be there is then
  // traceable to a replica (the fault tests fail on one).
  absl::Status Absent() {
    const object::ObjectRef& home = table_->bucket_refs[table_->index->Home(hash_)];
    return absl::NotFoundError(absl::StrCat("no such key ", key_.substr(0, 64), " (home bucket ", home.address.ToString(), " at node ",
                                            thread_.NodeServing(home), ", version ", home_version_, ", epoch ",
                                            thread_.replicas().epoch(), ")"));
  }

  void EndTransaction() {
    if (tx_open_) thread_.Abort(*tx_);
    tx_open_ = false;
  }

  void Retry(const absl::Status& s) {
    EndTransaction();
    auto self = shared_from_this();
    if (IsTableMoved(s)) {
      return OnTableMoved(
          thread_, handle_, table_->epoch(), s, moved_wait_,
          [self](MovedWait wait) {
            self->moved_wait_ = wait;
            self->table_ = self->handle_->current();
            self->Start();
          },
          [self](absl::Status failed) { self->done_(GetResult{failed, self->reads_}); });
    }
    const bool stale = absl::IsAborted(s) || absl::IsNotFound(s) || absl::IsFailedPrecondition(s);
    if (!stale) return done_(GetResult{s, reads_});
    // A stale read may also be a freed bucket of a retired generation: look for a newer one first.
    handle_->RefreshAsync(thread_, table_->epoch(), [self, s](absl::StatusOr<bool> newer) {
      if (!newer.ok()) return self->done_(GetResult{newer.status(), self->reads_});
      if (*newer) {
        self->table_ = self->handle_->current();
        return self->Again(absl::ZeroDuration());
      }
      if (++self->stale_attempts_ >= kGetAttempts) return self->done_(GetResult{s, self->reads_});
      // Let the thread's loop run (the writer may need it to install) before trying again.
      self->Again(absl::ZeroDuration());
    });
  }

  void Again(absl::Duration delay) {
    auto self = shared_from_this();
    if (delay > absl::ZeroDuration()) return thread_.After(delay, [self] { self->Start(); });
    if (!thread_.thread().Post([self] { self->Start(); })) {
      done_(GetResult{absl::UnavailableError("node thread stopped"), reads_});
    }
  }

  void Finish(absl::StatusOr<std::string> value) {
    EndTransaction();
    // A read is current only while this node holds its lease: once it lapsed, the CM may have removed this
    // node and moved the region (a partition), so an answer may be stale (FaRM: no lease, no service).
    const auto& lapsed = thread_.options().lease_lapsed;
    if ((value.ok() || absl::IsNotFound(value.status())) && lapsed && lapsed()) {
      value = absl::UnavailableError("this node's lease lapsed: the read may be stale (retry once it is a member again)");
    }
    done_(GetResult{std::move(value), reads_});
  }

  txn::TxnThread& thread_;
  const std::shared_ptr<TableHandle> handle_;
  std::shared_ptr<const TableState> table_;  // the generation this attempt reads
  const std::string key_;
  const uint64_t hash_;
  const std::function<void(GetResult)> done_;
  std::shared_ptr<const Table::GetPause> pause_;  // tests only
  // Waiting for a resize to publish: set at the first rejection (reading the clock costs every GET).
  MovedWait moved_wait_;
  std::shared_ptr<txn::TxState> tx_;  // null until a read after the first bucket
  bool tx_open_ = false;              // tx_ still to be aborted (not committed)
  uint64_t home_version_ = 0;         // of the first bucket, read lock-free
  std::string bucket_;            // the bucket being scanned
  // Buckets to read after a miss, from next_index_ on (a std::deque allocated even when empty).
  std::vector<uint64_t> next_;
  size_t next_index_ = 0;
  int objects_read_ = 0;          // in this attempt
  int reads_ = 0;                 // reads (one-sided, or a request to the owner) over all attempts, validation included
  int stale_attempts_ = 0;
};


void Mutate(txn::TxnThread& thread, std::shared_ptr<TableHandle> handle, OpKind kind, std::string key,
            std::string value, std::function<void(absl::Status)> done, int attempt, MovedWait wait) {
  std::shared_ptr<const TableState> table = handle->current();
  std::shared_ptr<txn::TxState> tx = thread.Begin();
  auto again = [&thread, handle, kind, key, value, done](int next_attempt, MovedWait w) {
    Mutate(thread, handle, kind, key, value, done, next_attempt, w);
  };
  auto retry_or_done = [&thread, handle, table, again, done, attempt, wait](absl::Status s) {
    if (IsTableMoved(s)) {  // a resize froze or retired what we read: go to the new generation
      return OnTableMoved(
          thread, handle, table->epoch(), s, wait, [again, attempt](MovedWait w) { again(attempt, w); }, done);
    }
    if (absl::IsAborted(s) && attempt < kMutateAttempts) {
      // Back off (doubling from 10 us to 1 ms): a conflict or a full log needs the others to get on.
      const absl::Duration backoff = absl::Microseconds(10) * (1 << std::min(attempt - 1, 7));
      thread.After(backoff, [again, attempt, wait] { again(attempt + 1, wait); });
      return;
    }
    done(s);
  };
  // Runs once: its own copies of the key and value move on (a retry starts from again's).
  auto run = [&thread, table, tx, kind, key, value, retry_or_done]() mutable {
    RunOperation(table, AsyncOps(thread, tx), kind, std::move(key), std::move(value),
                 [&thread, tx, retry_or_done](absl::StatusOr<std::string> r) {
                   if (!r.ok()) {
                     thread.Abort(*tx);
                     return retry_or_done(r.status());
                   }
                   thread.Commit(tx, retry_or_done);
                 });
  };
  // Over tcp: the key's bucket and value object in one round trip, into the read set (fetch_at_owner.h).
  FetchAtOwner(thread, tx, *table, key, std::move(run));
}

}  // namespace

void Table::GetAsync(txn::TxnThread& thread, std::string_view key, std::function<void(GetResult)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(GetResult{s, 0});
  std::make_shared<GetRun>(thread, views_->For(thread), key, std::move(done), get_pause_)->Start();
}

void Table::PutAsync(txn::TxnThread& thread, std::string key, std::string value,
                     std::function<void(absl::Status)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  if (absl::Status s = CheckValue(value); !s.ok()) return done(s);
  Mutate(thread, handle_, OpKind::kPut, std::move(key), std::move(value), std::move(done), 1, MovedWait{});
}

void Table::DeleteAsync(txn::TxnThread& thread, std::string key, std::function<void(absl::Status)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  Mutate(thread, handle_, OpKind::kDelete, std::move(key), std::string(), std::move(done), 1, MovedWait{});
}

}  // namespace fathom::kv
