#include "kv/operation.h"

#include "absl/strings/str_cat.h"

namespace fathom::kv {
namespace {

class Async final : public TxnOps {
 public:
  Async(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx) : thread_(thread), tx_(std::move(tx)) {}
  void ReadMany(std::vector<object::ObjectRef> refs, ReadManyCallback done) override {
    thread_.ReadMany(tx_, refs, std::move(done));
  }
  absl::Status Write(const object::ObjectRef& ref, std::string_view bytes) override {
    return thread_.Write(*tx_, ref, bytes);
  }
  void Alloc(uint32_t payload_capacity, const object::ObjectRef& near, AllocCallback done) override {
    thread_.Alloc(tx_, payload_capacity, thread_.NodeServing(near), std::move(done));
  }
  absl::Status Free(const object::ObjectRef& ref) override { return thread_.Free(*tx_, ref); }

 private:
  txn::TxnThread& thread_;
  std::shared_ptr<txn::TxState> tx_;
};

// A value object read inside a transaction that has gone (freed or reused since the bucket was read) means
// the bucket changed: the transaction cannot commit, so say Aborted and let it be retried.
absl::Status StaleIsAborted(const absl::Status& s) {
  if (absl::IsNotFound(s) || absl::IsFailedPrecondition(s)) return absl::AbortedError(s.message());
  return s;
}

class Run : public std::enable_shared_from_this<Run> {
 public:
  Run(std::shared_ptr<const TableState> table, std::shared_ptr<TxnOps> ops, OpKind kind, std::string key,
      std::string value, std::function<void(absl::StatusOr<std::string>)> done)
      : table_(std::move(table)), ops_(std::move(ops)), kind_(kind), key_(std::move(key)), value_(std::move(value)),
        done_(std::move(done)), hash_(KeyHash(key_)) {}

  // A resize's copy: the entry exists already.
  void StartWith(const Entry& entry) {
    entry_ = entry;
    Loop();
  }

  void Start() {
    if (kind_ != OpKind::kPut) return Loop();
    entry_.hash = hash_;
    entry_.key_bytes = static_cast<uint16_t>(key_.size());
    entry_.value_bytes = static_cast<uint32_t>(value_.size());
    if (key_.size() + value_.size() <= table_->root.inline_bytes) {
      entry_.is_inline = true;
      entry_.key = key_;
      entry_.value = value_;
      return Loop();
    }
    // Out of line: a new object next to the home bucket (so a GET's second read goes to the same node).
    entry_.is_inline = false;
    auto payload = std::make_shared<std::string>(EncodeValueObject(key_, value_));
    const object::ObjectRef& near = table_->bucket_refs[table_->index->Home(hash_)];
    auto self = shared_from_this();
    ops_->Alloc(static_cast<uint32_t>(payload->size()), near,
                [self, payload](absl::StatusOr<object::ObjectRef> ref) {
                  if (!ref.ok()) return self->done_(ref.status());
                  self->allocated_ = *ref;
                  self->entry_.ref = *ref;
                  // A pointer names no slot size: the slot must be the one the value's bytes imply. An
                  // allocator whose memory is carved up offers a free slot of a larger class instead.
                  if (!self->entry_.IsShortPointer()) {
                    return self->Fail(absl::ResourceExhaustedError(absl::StrCat(
                        "no free slot of ", ValueObjectCapacity(self->entry_.key_bytes, self->entry_.value_bytes),
                        " bytes for a value object of ", payload->size(), " bytes (only one of ", ref->capacity,
                        "): the owner's memory is carved up")));
                  }
                  if (absl::Status s = self->ops_->Write(*ref, *payload); !s.ok()) return self->Fail(s);
                  self->Loop();
                });
  }

 private:
  void Loop() {
    const Index& index = *table_->index;
    Step step = kind_ == OpKind::kGet   ? index.Get(key_, hash_, ws_)
                : kind_ == OpKind::kPut ? index.Put(key_, hash_, entry_, ws_)
                                        : index.Delete(key_, hash_, ws_);
    auto self = shared_from_this();
    switch (step.kind) {
      case Step::Kind::kNeedBuckets: {
        std::vector<object::ObjectRef> refs;
        for (uint64_t b : step.buckets) refs.push_back(table_->bucket_refs[b]);
        ops_->ReadMany(std::move(refs), [self, buckets = step.buckets](absl::StatusOr<std::vector<std::string>> r) {
          // Buckets are freed only with their generation (after a resize, or a drop): refetch the table.
          if (absl::IsNotFound(r.status()) || absl::IsFailedPrecondition(r.status())) {
            return self->Fail(TableMovedError(std::string(r.status().message())));
          }
          if (!r.ok()) return self->Fail(r.status());
          for (size_t i = 0; i < buckets.size(); ++i) {
            auto bucket = DecodeBucket((*r)[i]);
            if (!bucket.ok()) return self->Fail(bucket.status());
            if (absl::Status moved = self->CheckGeneration(*bucket); !moved.ok()) return self->Fail(moved);
            if (absl::Status s = self->table_->index->CheckBucket(buckets[i], *bucket); !s.ok()) return self->Fail(s);
            self->ws_.buckets[buckets[i]] = std::move(*bucket);
          }
          self->Loop();
        });
        return;
      }
      case Step::Kind::kNeedObject:
        ops_->ReadMany({step.object}, [self, ref = step.object](absl::StatusOr<std::vector<std::string>> r) {
          if (!r.ok()) return self->Fail(StaleIsAborted(r.status()));
          self->ws_.object_payloads[ref.address.raw()] = std::move((*r)[0]);
          self->Loop();
        });
        return;
      case Step::Kind::kDone:
        return Complete(std::move(step));
    }
  }

  // Rejects a bucket of another generation (retired by a resize); and for writes a frozen one, whose
  // contents a resize is copying (a write there would be lost).
  absl::Status CheckGeneration(const Bucket& bucket) const {
    if (bucket.epoch != table_->epoch_word()) {
      return TableMovedError(absl::StrCat("bucket of epoch ", bucket.epoch, ", table epoch ", table_->epoch()));
    }
    if (kind_ != OpKind::kGet && (bucket.flags & kBucketFrozen) != 0) return TableMovedError("resizing");
    return absl::OkStatus();
  }

  void Complete(Step step) {
    if (!step.status.ok()) return Fail(step.status);
    if (kind_ == OpKind::kGet) {
      const Entry& e = *step.found;
      if (e.is_inline) return done_(e.value);
      auto have = ws_.object_payloads.find(e.ref.address.raw());
      if (have != ws_.object_payloads.end()) return FinishGet(e, have->second);
      auto self = shared_from_this();
      ops_->ReadMany({e.ref}, [self, e](absl::StatusOr<std::vector<std::string>> r) {
        if (!r.ok()) return self->Fail(StaleIsAborted(r.status()));
        self->FinishGet(e, (*r)[0]);
      });
      return;
    }
    for (uint64_t b : ws_.dirty) {
      Bucket& bucket = ws_.buckets.at(b);
      bucket.epoch = table_->epoch_word();
      if (absl::Status s = ops_->Write(table_->bucket_refs[b], EncodeBucket(bucket)); !s.ok()) return Fail(s);
    }
    for (const object::ObjectRef& ref : step.freed) {
      if (absl::Status s = ops_->Free(ref); !s.ok()) return Fail(s);
    }
    done_(std::string());
  }

  void FinishGet(const Entry& e, std::string_view payload) {
    auto value = CheckValueObject(payload, key_, e.value_bytes, e.checksum);
    if (!value.ok()) return done_(StaleIsAborted(value.status()));
    done_(std::string(*value));
  }

  // Gives back the object a failed Put allocated, so a user transaction that goes on does not keep it.
  void Fail(absl::Status s) {
    if (allocated_.has_value()) ops_->Free(*allocated_).IgnoreError();
    allocated_.reset();
    done_(std::move(s));
  }

  const std::shared_ptr<const TableState> table_;
  const std::shared_ptr<TxnOps> ops_;
  const OpKind kind_;
  const std::string key_;
  const std::string value_;
  const std::function<void(absl::StatusOr<std::string>)> done_;
  const uint64_t hash_;
  Entry entry_;
  std::optional<object::ObjectRef> allocated_;
  Workspace ws_;
};

}  // namespace

std::shared_ptr<TxnOps> AsyncOps(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx) {
  return std::make_shared<Async>(thread, std::move(tx));
}

void RunOperation(std::shared_ptr<const TableState> table, std::shared_ptr<TxnOps> ops, OpKind kind, std::string key,
                  std::string value, std::function<void(absl::StatusOr<std::string>)> done) {
  std::make_shared<Run>(std::move(table), std::move(ops), kind, std::move(key), std::move(value), std::move(done))
      ->Start();
}

void InsertEntry(std::shared_ptr<const TableState> table, std::shared_ptr<TxnOps> ops, std::string key,
                 const Entry& entry, std::function<void(absl::Status)> done) {
  std::make_shared<Run>(std::move(table), std::move(ops), OpKind::kPut, std::move(key), std::string(),
                        [done = std::move(done)](absl::StatusOr<std::string> r) { done(r.status()); })
      ->StartWith(entry);
}

}  // namespace fathom::kv
