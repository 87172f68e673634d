// kv::Table on node threads: the lock-free GET and the asynchronous PUT/DELETE.
//
// GET reads the home bucket with a one-sided read in a single-object, read-only transaction that is then
// dropped: one object copy checked whole is a consistent snapshot by itself, so there is nothing to
// validate and no message to send (docs/formats/kv.md explains why the second read, when there is one,
// needs no validation either). It scans the raw bytes without decoding, so a hit allocates only the value.
#include <algorithm>

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
         std::function<void(GetResult)> done)
      : thread_(thread), table_(std::move(table)), key_(key), hash_(KeyHash(key_)), done_(std::move(done)) {}

  void Start() {
    ++attempts_;
    ReadBucket(table_->index->Home(hash_), /*home=*/true);
  }

 private:
  // One object, read in a transaction of its own that is then dropped (see the file comment).
  void ReadOne(const object::ObjectRef& ref, std::function<void(absl::StatusOr<std::string>)> then) {
    ++reads_;
    std::shared_ptr<txn::TxState> tx = thread_.Begin();
    thread_.Read(*tx, ref, [this, tx, then = std::move(then)](absl::StatusOr<std::string> r) {
      thread_.Abort(*tx);
      then(std::move(r));
    });
  }

  void ReadBucket(uint64_t bucket, bool home) {
    auto self = shared_from_this();
    ReadOne(table_->bucket_refs[bucket], [self, bucket, home](absl::StatusOr<std::string> bytes) {
      if (!bytes.ok()) return self->Retry(bytes.status());
      self->bucket_ = std::move(*bytes);
      self->Scan(bucket, home, 0);
    });
  }

  void Scan(uint64_t bucket, bool home, size_t from) {
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
      // Out of line: a second read, checked against the pointer's length and checksum.
      auto self = shared_from_this();
      const uint32_t value_bytes = m->value_bytes;
      const uint64_t checksum = m->checksum;
      ReadOne(m->ref, [self, bucket, home, from, value_bytes, checksum](absl::StatusOr<std::string> payload) {
        // A freed or reused object: the bucket changed after we read it. Start again.
        if (!payload.ok()) return self->Retry(payload.status());
        auto value = CheckValueObject(*payload, self->key_, value_bytes, checksum);
        if (absl::IsNotFound(value.status())) return self->Scan(bucket, home, from);  // a hash collision
        if (!value.ok()) return self->Retry(value.status());
        self->Finish(std::string(*value));
      });
      return;
    }
    if (home) {
      auto spilled = BucketSpilled(bucket_);
      if (!spilled.ok()) return Finish(spilled.status());
      // Keys move only forward, so reading the next bucket after this one needs no validation.
      if (*spilled > 0) return ReadBucket(static_cast<const HopscotchIndex&>(*table_->index).Next(bucket), false);
    }
    Finish(absl::NotFoundError("no such key"));
  }

  void Retry(const absl::Status& s) {
    const bool stale = absl::IsAborted(s) || absl::IsNotFound(s) || absl::IsFailedPrecondition(s);
    if (!stale || attempts_ >= kGetAttempts) return Finish(s);
    // Let the thread's loop run (the writer may need it to install) before trying again.
    auto self = shared_from_this();
    if (!thread_.thread().Post([self] { self->Start(); })) Finish(absl::UnavailableError("node thread stopped"));
  }

  void Finish(absl::StatusOr<std::string> value) { done_(GetResult{std::move(value), reads_}); }

  txn::TxnThread& thread_;
  const std::shared_ptr<const TableState> table_;
  const std::string key_;
  const uint64_t hash_;
  const std::function<void(GetResult)> done_;
  std::string bucket_;
  int reads_ = 0;
  int attempts_ = 0;
};

// Runs `task` on the thread once `delay` has passed. The node thread has no timers, so the task re-posts
// itself each turn of the loop until then (the loop keeps polling meanwhile).
void PostAfter(txn::TxnThread& thread, absl::Time at, std::function<void()> task) {
  if (thread.clock().Now() >= at) return task();
  if (!thread.thread().Post([&thread, at, task] { PostAfter(thread, at, task); })) task();
}

void Mutate(txn::TxnThread& thread, std::shared_ptr<const TableState> table, OpKind kind, std::string key,
            std::string value, std::function<void(absl::Status)> done, int attempt) {
  std::shared_ptr<txn::TxState> tx = thread.Begin();
  auto retry_or_done = [&thread, table, kind, key, value, done, attempt](absl::Status s) {
    if (absl::IsAborted(s) && attempt < kMutateAttempts) {
      // Back off (doubling from 10 us to 1 ms): a conflict or a full log needs the others to get on.
      const absl::Duration backoff = absl::Microseconds(10) * (1 << std::min(attempt - 1, 7));
      PostAfter(thread, thread.clock().Now() + backoff, [&thread, table, kind, key, value, done, attempt] {
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
  std::make_shared<GetRun>(thread, state_, key, std::move(done))->Start();
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
