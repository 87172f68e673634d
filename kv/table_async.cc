// kv::Table on node threads: the lock-free GET and the asynchronous PUT/DELETE.
//
// GET reads the key's first bucket (hopscotch: home; cuckoo: first candidate) with a one-sided read in a
// read-only transaction. A hit there needs nothing more: one object copy checked whole is a consistent
// snapshot by itself. On a miss it reads the buckets the index names next (MoreBuckets), one at a time,
// and stops at the first hit (a hit in any one bucket is again a snapshot of that key). A miss over
// several buckets is validated by committing the read-only transaction (the versions of everything it
// read are read again, one-sided): a key moving between two buckets while they were read one after the
// other could otherwise be missed in both. It scans the raw bytes without decoding, so a hit allocates
// only the value.
#include <algorithm>
#include <deque>

#include "absl/strings/str_cat.h"
#include "kv/kv.h"
#include "kv/operation.h"

namespace fathom::kv {
namespace {

constexpr int kGetAttempts = 32;
constexpr int kMutateAttempts = 64;

class GetRun : public std::enable_shared_from_this<GetRun> {
 public:
  GetRun(txn::TxnThread& thread, std::shared_ptr<const TableState> table, std::string_view key,
         std::function<void(GetResult)> done, std::shared_ptr<const Table::GetPause> pause)
      : thread_(thread), table_(std::move(table)), key_(key), hash_(KeyHash(key_)), done_(std::move(done)),
        pause_(std::move(pause)) {}

  void Start() {
    ++attempts_;
    tx_ = thread_.Begin();
    objects_read_ = 0;
    ReadBucket(table_->index->Home(hash_), /*first=*/true);
  }

 private:
  void ReadOne(const object::ObjectRef& ref, std::function<void(absl::StatusOr<std::string>)> then) {
    ++reads_;
    ++objects_read_;
    thread_.Read(*tx_, ref, std::move(then));
  }

  void ReadBucket(uint64_t bucket, bool first) {
    auto self = shared_from_this();
    ReadOne(table_->bucket_refs[bucket], [self, first](absl::StatusOr<std::string> bytes) {
      if (!bytes.ok()) return self->Retry(bytes.status());
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
      // Out of line: one more read, checked against the pointer's length and checksum.
      auto self = shared_from_this();
      const uint32_t value_bytes = m->value_bytes;
      const uint64_t checksum = m->checksum;
      ReadOne(m->ref, [self, first, from, value_bytes, checksum](absl::StatusOr<std::string> payload) {
        // A freed or reused object: the bucket changed after we read it. Start again.
        if (!payload.ok()) return self->Retry(payload.status());
        auto value = CheckValueObject(*payload, self->key_, value_bytes, checksum);
        if (absl::IsNotFound(value.status())) return self->Scan(first, from);  // a hash collision
        if (!value.ok()) return self->Retry(value.status());
        self->Finish(std::string(*value));
      });
      return;
    }
    if (first) {
      auto more = table_->index->MoreBuckets(hash_, bucket_);
      if (!more.ok()) return Finish(more.status());
      next_.assign(more->begin(), more->end());
    }
    if (!next_.empty() && first && pause_ != nullptr) {
      auto self = shared_from_this();
      auto pause = std::move(pause_);  // once per GET
      return (*pause)(thread_, [self] { self->ReadNextOrValidate(); });
    }
    ReadNextOrValidate();
  }

  void ReadNextOrValidate() {
    if (!next_.empty()) {
      const uint64_t b = next_.front();
      next_.pop_front();
      return ReadBucket(b, /*first=*/false);
    }
    if (objects_read_ == 1) return Finish(absl::NotFoundError("no such key"));
    // Absent from every bucket, each at its own moment: commit the read-only transaction, which checks
    // that none of them changed since, so the key was absent from all at once.
    reads_ += objects_read_;
    auto self = shared_from_this();
    tx_open_ = false;
    thread_.Commit(tx_, [self](absl::Status s) {
      if (s.ok()) return self->Finish(absl::NotFoundError("no such key"));
      self->Retry(s);
    });
  }

  void EndTransaction() {
    if (tx_open_) thread_.Abort(*tx_);
    tx_open_ = true;  // for the next attempt
  }

  void Retry(const absl::Status& s) {
    EndTransaction();
    const bool stale = absl::IsAborted(s) || absl::IsNotFound(s) || absl::IsFailedPrecondition(s);
    if (!stale || attempts_ >= kGetAttempts) return done_(GetResult{s, reads_});
    // Let the thread's loop run (the writer may need it to install) before trying again.
    auto self = shared_from_this();
    if (!thread_.thread().Post([self] { self->Start(); })) {
      done_(GetResult{absl::UnavailableError("node thread stopped"), reads_});
    }
  }

  void Finish(absl::StatusOr<std::string> value) {
    EndTransaction();
    done_(GetResult{std::move(value), reads_});
  }

  txn::TxnThread& thread_;
  const std::shared_ptr<const TableState> table_;
  const std::string key_;
  const uint64_t hash_;
  const std::function<void(GetResult)> done_;
  std::shared_ptr<const Table::GetPause> pause_;  // tests only
  std::shared_ptr<txn::TxState> tx_;
  bool tx_open_ = true;           // tx_ still to be aborted (not committed)
  std::string bucket_;            // the bucket being scanned
  std::deque<uint64_t> next_;     // buckets still to read after a miss
  int objects_read_ = 0;          // in this attempt
  int reads_ = 0;                 // one-sided reads over all attempts, validation included
  int attempts_ = 0;
};


void Mutate(txn::TxnThread& thread, std::shared_ptr<const TableState> table, OpKind kind, std::string key,
            std::string value, std::function<void(absl::Status)> done, int attempt) {
  std::shared_ptr<txn::TxState> tx = thread.Begin();
  auto retry_or_done = [&thread, table, kind, key, value, done, attempt](absl::Status s) {
    if (absl::IsAborted(s) && attempt < kMutateAttempts) {
      // Back off (doubling from 10 us to 1 ms): a conflict or a full log needs the others to get on.
      const absl::Duration backoff = absl::Microseconds(10) * (1 << std::min(attempt - 1, 7));
      thread.After(backoff, [&thread, table, kind, key, value, done, attempt] {
        Mutate(thread, table, kind, key, value, done, attempt + 1);
      });
      return;
    }
    done(s);
  };
  RunOperation(table, AsyncOps(thread, tx), kind, key, value,
               [&thread, tx, retry_or_done](absl::StatusOr<std::string> r) {
                 if (!r.ok()) {
                   thread.Abort(*tx);
                   return retry_or_done(r.status());
                 }
                 thread.Commit(tx, retry_or_done);
               });
}

}  // namespace

void Table::GetAsync(txn::TxnThread& thread, std::string_view key, std::function<void(GetResult)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(GetResult{s, 0});
  std::make_shared<GetRun>(thread, state_, key, std::move(done), get_pause_)->Start();
}

void Table::PutAsync(txn::TxnThread& thread, std::string key, std::string value,
                     std::function<void(absl::Status)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  if (absl::Status s = CheckValue(value); !s.ok()) return done(s);
  Mutate(thread, state_, OpKind::kPut, std::move(key), std::move(value), std::move(done), 1);
}

void Table::DeleteAsync(txn::TxnThread& thread, std::string key, std::function<void(absl::Status)> done) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return done(s);
  Mutate(thread, state_, OpKind::kDelete, std::move(key), std::string(), std::move(done), 1);
}

}  // namespace fathom::kv
