// Table::Resize: a new generation of a table built beside the old one, published through the catalog.
//
//   1. freeze   every old bucket gets kBucketFrozen (bucket 0 first, in the first transaction: whoever
//               freezes it owns the resize). PUT/DELETE that read a frozen bucket are rejected before
//               writing and wait; a write that read a bucket before it froze fails validation or locking at
//               commit (the freeze changed its version). From here the old generation no longer changes.
//               GETs still read it: it holds the latest value of every key.
//   2. build    the new generation (epoch + 1) in newly allocated buckets, unpublished: nobody else sees it.
//   3. copy     every entry of the (frozen) old buckets into the new ones, by transactions; out-of-line
//               entries keep their value objects, which now belong to the new generation.
//   4. retire   every old bucket's epoch word becomes the new epoch: any GET or PUT holding the old
//               generation that reads it is rejected, refetches the descriptor and retries (if the new one
//               is not published yet it waits).
//   5. publish  the catalog swaps the descriptor (compare-and-set on the old one): from now on operations
//               that refetch get the new generation, and only now can anyone write to it.
//   6. free     after a grace period, the old buckets (not their value objects), chunks and root.
//
// Why no key is lost, duplicated or read stale (linearizability; also docs/formats/kv.md, "Resize"):
// writes to the old generation stop at 1 and writes to the new one start after 5, and 3 copies each key
// once between them, so at every moment exactly one generation is authoritative: the old one until 5,
// the new one after. A GET that reads an old bucket whose epoch word still matches read it before 4, so
// before 5, when the old generation was authoritative: its answer was the key's value at that read.
// A GET that misses over several buckets is validated at commit as before; a retire in between fails it.
// A GET of the new generation only exists after 5 (it got the descriptor from the catalog).
//
// Not yet: a resize whose process dies between 1 and 5 leaves the table frozen (no recovery of an
// interrupted resize), and tables only grow or shrink as a whole (no incremental, per-shard resize).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kv/batches.h"
#include "kv/kv.h"
#include "kv/operation.h"
#include "kv/table_objects.h"
#include "platform/base/clock.h"
#include "platform/base/status_macros.h"
#include "platform/node/executor.h"
#include "platform/node/node.h"

namespace fathom::kv {
namespace {

// Buckets read per rewrite transaction, and the most bucket payload one commit writes (its records must
// fit a ring message, a quarter of a 64 KiB ring). Freezing goes in smaller steps: each step competes
// with the table's writers (any write to a bucket it read makes it retry).
constexpr size_t kRewriteRead = 16;
constexpr size_t kFreezeRead = 4;
constexpr size_t kRewriteBytes = 8192;
// A copy transaction inserts entries bound for at most this many new buckets (each written whole, up
// to 2 KiB with the default inline bytes), and at most this many entries. Buckets with larger inline
// bytes (up to 130 KiB) go fewer at a time, down to one: a commit's records must fit a ring message,
// and several large buckets on one primary would not (a resize of such a table failed with
// InvalidArgument "message of N bytes exceeds what node's ring takes").
constexpr size_t kCopyBuckets = 6;
constexpr size_t kCopyBucketBytes = kCopyBuckets * 2048;
constexpr size_t kCopyEntries = 48;
// Old buckets read before their entries are inserted: enough to group entries by new home well, few
// enough that their entries stay a small part of memory.
constexpr size_t kCopyWindow = 8192;
constexpr absl::Duration kPoll = absl::Milliseconds(1);
// After a publish whose answer was lost: how often and how long to ask the catalog what happened.
constexpr int kFindAttempts = 50;
constexpr absl::Duration kFindPause = absl::Milliseconds(100);

// Not Aborted: RunTransaction would retry that.
absl::Status Busy() { return absl::AlreadyExistsError("another resize froze this table first"); }

// The resize's transactions on the old generation compete with its writers until they are frozen out:
// retry far longer than a client would rather than give up halfway.
txn::RetryOptions Persistent() {
  txn::RetryOptions retry;
  retry.max_attempts = 5000;
  retry.max_backoff = absl::Milliseconds(2);
  return retry;
}

// Rewrites every bucket of `refs` through `change` (which may refuse with an error), `per_transaction`
// buckets to a transaction (fewer when large buckets would pass kRewriteBytes), several transactions
// at once after the first (which holds bucket 0: whoever freezes it owns the resize).
absl::Status RewriteBuckets(txn::TransactionService& txns, const std::vector<object::ObjectRef>& refs,
                            size_t per_transaction, std::function<absl::Status(Bucket&)> change) {
  if (refs.empty()) return absl::OkStatus();
  // A bucket's encoding never exceeds its payload capacity, so this many always fit kRewriteBytes.
  const size_t per = std::clamp<size_t>(kRewriteBytes / refs[0].payload_capacity(), 1, per_transaction);
  auto shared_change = std::make_shared<const std::function<absl::Status(Bucket&)>>(std::move(change));
  auto batch_at = [&refs, per, shared_change](size_t first) -> BatchBody {
    auto batch = std::make_shared<const std::vector<object::ObjectRef>>(
        refs.begin() + first, refs.begin() + std::min(refs.size(), first + per));
    return [batch, change = shared_change](txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx,
                                           txn::DoneCallback body_done) {
      thread.ReadMany(tx, *batch, [&thread, tx, batch, change, body_done](absl::StatusOr<std::vector<std::string>> bytes) {
        if (!bytes.ok()) return body_done(bytes.status());
        for (size_t i = 0; i < batch->size(); ++i) {
          absl::StatusOr<Bucket> bucket = DecodeBucket((*bytes)[i]);
          if (!bucket.ok()) return body_done(bucket.status());
          if (absl::Status s = (*change)(*bucket); !s.ok()) return body_done(s);
          if (absl::Status s = thread.Write(*tx, (*batch)[i], EncodeBucket(*bucket)); !s.ok()) return body_done(s);
        }
        body_done(absl::OkStatus());
      });
    };
  };
  BatchOptions options;
  options.retry = Persistent();
  RETURN_IF_ERROR(RunBatches(txns, 1, [&](size_t) { return batch_at(0); }, options));
  const size_t rest = refs.size() > per ? (refs.size() - per + per - 1) / per : 0;
  return RunBatches(txns, rest, [&](size_t i) { return batch_at((i + 1) * per); }, options);
}

using KeyedEntries = std::vector<std::pair<std::string, Entry>>;

// A transaction that reads old buckets `batch` and leaves their entries, with their keys (an out-of-line
// entry's key is in its value object), in `out`.
BatchBody ReadEntries(std::shared_ptr<const std::vector<object::ObjectRef>> batch, std::shared_ptr<KeyedEntries> out) {
  return [batch, out](txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, txn::DoneCallback body_done) {
    thread.ReadMany(tx, *batch, [&thread, tx, out, body_done](absl::StatusOr<std::vector<std::string>> bytes) {
      if (!bytes.ok()) return body_done(bytes.status());
      auto entries = std::make_shared<KeyedEntries>();
      std::vector<object::ObjectRef> values;
      for (const std::string& b : *bytes) {
        absl::StatusOr<Bucket> bucket = DecodeBucket(b);
        if (!bucket.ok()) return body_done(bucket.status());
        for (const Entry& e : bucket->entries) {
          entries->emplace_back(e.is_inline ? e.key : std::string(), e);
          if (!e.is_inline) values.push_back(e.ref);
        }
      }
      thread.ReadMany(tx, values, [entries, out, body_done](absl::StatusOr<std::vector<std::string>> payloads) {
        if (!payloads.ok()) return body_done(payloads.status());
        size_t next = 0;
        for (auto& [key, e] : *entries) {
          if (e.is_inline) continue;
          const std::string& payload = (*payloads)[next++];
          if (payload.size() < 4 + size_t{e.key_bytes}) {
            return body_done(absl::DataLossError("kv value object shorter than its key"));
          }
          key = payload.substr(4, e.key_bytes);
        }
        *out = std::move(*entries);  // the last attempt's (each attempt reads the same frozen buckets)
        body_done(absl::OkStatus());
      });
    });
  };
}

// A transaction that inserts `entries` into the unpublished `to`.
BatchBody InsertEntries(std::shared_ptr<const TableState> to, std::shared_ptr<const KeyedEntries> entries) {
  return [to, entries](txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx, txn::DoneCallback body_done) {
    auto ops = AsyncOps(thread, tx);
    // One after the other: each may move entries the next one looks at.
    auto insert = std::make_shared<std::function<void(size_t)>>();
    // The pending insert's callback holds the chain; the chain holds itself only weakly (no cycle).
    *insert = [to, entries, ops, body_done, weak = std::weak_ptr<std::function<void(size_t)>>(insert)](size_t i) {
      if (i == entries->size()) return body_done(absl::OkStatus());
      InsertEntry(to, ops, (*entries)[i].first, (*entries)[i].second,
                  [self = weak.lock(), i, body_done](absl::Status s) {
                    if (!s.ok()) return body_done(s);
                    (*self)(i + 1);
                  });
    };
    (*insert)(0);
  };
}

// Copies every entry of the frozen `from` into the unpublished `to`: the old buckets a window at a time,
// read by parallel transactions, then their entries inserted by parallel transactions, grouped by new
// home bucket (a commit writes whole buckets: the fewer it touches, the fewer transactions the copy takes).
absl::Status CopyEntries(txn::TransactionService& txns, const TableState& from,
                         const std::shared_ptr<const TableState>& to) {
  const size_t max_homes =
      std::clamp<size_t>(kCopyBucketBytes / std::max<size_t>(to->root.bucket_capacity, 1), 1, kCopyBuckets);
  const std::vector<object::ObjectRef>& old = from.bucket_refs;
  // Inserts that run together conflict when their displacements meet (cuckoo's reach the whole table):
  // one at a time in small tables, up to 8 in large ones, retried as long as the freeze is.
  BatchOptions insert_options;
  insert_options.in_flight = std::clamp<size_t>(to->root.buckets / 4096, 1, 8);
  insert_options.retry = Persistent();
  for (size_t window = 0; window < old.size(); window += kCopyWindow) {
    const size_t end = std::min(old.size(), window + kCopyWindow);
    std::vector<std::shared_ptr<KeyedEntries>> read;
    std::vector<BatchBody> reads;
    for (size_t at = window; at < end; at += kRewriteRead) {
      read.push_back(std::make_shared<KeyedEntries>());
      reads.push_back(ReadEntries(std::make_shared<const std::vector<object::ObjectRef>>(
                                      old.begin() + at, old.begin() + std::min(end, at + kRewriteRead)),
                                  read.back()));
    }
    RETURN_IF_ERROR(RunBatches(txns, reads.size(), [&reads](size_t i) { return reads[i]; }));
    KeyedEntries entries;
    for (const auto& r : read) std::move(r->begin(), r->end(), std::back_inserter(entries));
    auto home = [&to](const std::pair<std::string, Entry>& e) { return to->index->Home(e.second.hash); };
    std::stable_sort(entries.begin(), entries.end(), [&](const auto& a, const auto& b) { return home(a) < home(b); });
    std::vector<BatchBody> inserts;
    for (size_t e = 0; e < entries.size();) {
      size_t stop = e;
      for (size_t homes = 0; stop < entries.size() && stop - e < kCopyEntries; ++stop) {
        if (stop == e || home(entries[stop]) != home(entries[stop - 1])) {
          if (homes == max_homes) break;
          ++homes;
        }
      }
      inserts.push_back(InsertEntries(to, std::make_shared<const KeyedEntries>(
                                              std::make_move_iterator(entries.begin() + e),
                                              std::make_move_iterator(entries.begin() + stop))));
      e = stop;
    }
    RETURN_IF_ERROR(RunBatches(txns, inserts.size(), [&inserts](size_t i) { return inserts[i]; }, insert_options));
  }
  return absl::OkStatus();
}

// Waits until the catalog names a generation of `name` newer than `epoch` (another resize's).
absl::Status WaitForNewer(Catalog& catalog, std::string_view name, uint64_t epoch, const ResizeOptions& options,
                          const Clock& clock) {
  const absl::Time give_up = clock.Now() + options.wait_for_other;
  for (;;) {
    ASSIGN_OR_RETURN(TableInfo info, catalog.Find(name));
    if (info.epoch > epoch) return absl::OkStatus();
    if (clock.Now() >= give_up) {
      return absl::UnavailableError(absl::StrCat("kv table \"", std::string(name), "\": a resize froze it at epoch ",
                                                 epoch, " and has not published"));
    }
    options.sleep(kPoll);
  }
}

}  // namespace

absl::Status Table::Resize(txn::TransactionService& txns, Catalog& catalog, std::string_view name,
                           ResizeOptions options) {
  const node::NodeOptions& on = txns.node().options();
  if (!options.sleep) {
    // On the node's clock; with an executor (the simulation) its threads and tasks run meanwhile.
    options.sleep = [&on](absl::Duration d) { node::WaitUntil(on.executor, *on.clock, [] { return false; }, d, d); };
  }
  auto step = [&options](std::string_view s) {
    if (options.after_step) options.after_step(s);
  };
  ASSIGN_OR_RETURN(TableInfo info, catalog.Find(name));
  ASSIGN_OR_RETURN(std::shared_ptr<TableState> old, LoadState(txns, info));
  if (options.from_epoch != 0 && old->epoch() != options.from_epoch) {
    return absl::FailedPreconditionError(absl::StrCat("kv table \"", info.name, "\" is at epoch ", old->epoch(),
                                                      ", not ", options.from_epoch, ": resized since"));
  }
  Root root = old->root;
  root.buckets = options.buckets != 0 ? options.buckets : old->root.buckets * 2;
  root.epoch = old->epoch() + 1;
  {
    TableOptions o;
    o.kind = root.kind;
    o.buckets = root.buckets;
    o.max_key_bytes = root.max_key_bytes;
    o.max_value_bytes = root.max_value_bytes;
    o.inline_bytes = root.inline_bytes;
    RETURN_IF_ERROR(CheckTableOptions(info.name, o));
  }

  // 1. Freeze.
  const uint32_t old_word = old->epoch_word();
  absl::Status frozen = RewriteBuckets(txns, old->bucket_refs, kFreezeRead, [old_word](Bucket& b) -> absl::Status {
    if (b.epoch != old_word || (b.flags & kBucketFrozen) != 0) return Busy();
    b.flags |= kBucketFrozen;
    return absl::OkStatus();
  });
  // Puts the old generation back to work after a failure before publishing: its buckets get their own
  // epoch back and lose the frozen flag (nothing was published, so it is still the table).
  auto give_back = [&] {
    return RewriteBuckets(txns, old->bucket_refs, kRewriteRead, [old_word](Bucket& b) {
      b.epoch = old_word;
      b.flags &= static_cast<uint8_t>(~kBucketFrozen);
      return absl::OkStatus();
    });
  };
  auto failed = [&](const absl::Status& why, const std::shared_ptr<TableState>& next) -> absl::Status {
    if (next != nullptr) FreeGeneration(txns, *next, /*values=*/false).IgnoreError();
    if (absl::Status s = give_back(); !s.ok()) {
      return absl::DataLossError(absl::StrCat("kv table \"", info.name, "\": resize failed (", why.ToString(),
                                              ") and the table stays frozen: ", s.ToString()));
    }
    return why;
  };
  if (!frozen.ok()) {
    // Another resize got there first (or already finished and freed the buckets): wait for it.
    if (absl::IsAlreadyExists(frozen) || absl::IsNotFound(frozen) || absl::IsFailedPrecondition(frozen)) {
      return WaitForNewer(catalog, info.name, info.epoch, options, *on.clock);
    }
    return failed(frozen, nullptr);  // whatever froze before the error goes back to work
  }
  step("frozen");

  // 2 and 3. Build and copy; on failure the old generation goes back to work.
  absl::StatusOr<std::shared_ptr<TableState>> built = BuildGeneration(txns, info.name, root);
  absl::Status copied = built.ok() ? CopyEntries(txns, *old, *built) : built.status();
  if (!copied.ok()) return failed(copied, built.ok() ? *built : nullptr);
  std::shared_ptr<TableState> next = std::move(*built);
  step("copied");

  // 4. Retire: the old epoch word no longer matches what its holders expect.
  absl::Status retired = RewriteBuckets(txns, old->bucket_refs, kRewriteRead, [word = next->epoch_word()](Bucket& b) {
    b.epoch = word;
    return absl::OkStatus();
  });
  if (!retired.ok()) return failed(retired, next);
  step("retired");

  // 5. Publish.
  if (absl::Status published = catalog.Replace(info, next->info()); !published.ok()) {
    // An answer lost on the way (ZooKeeper's connection loss) may hide a success: ask again, until the
    // catalog answers.
    absl::StatusOr<TableInfo> now = catalog.Find(info.name);
    for (int attempt = 0; !now.ok() && !absl::IsNotFound(now.status()) && attempt < kFindAttempts; ++attempt) {
      options.sleep(kFindPause);
      now = catalog.Find(info.name);
    }
    if (!now.ok() && !absl::IsNotFound(now.status())) {
      // Freeing either generation could free the one the catalog names: keep both.
      return absl::UnavailableError(absl::StrCat("resizing kv table ", info.name, ": publishing failed (",
                                                 published.message(), ") and whether it took effect is unknown (",
                                                 now.status().message(), "); both generations are kept"));
    }
    if (!now.ok() || !now->SameGeneration(next->info())) {
      // Not published (dropped meanwhile, or replaced by someone else): the new generation goes, and
      // unless the table is gone the old one goes back to work.
      if (now.ok() && now->SameGeneration(info)) return failed(published, next);
      FreeGeneration(txns, *next, /*values=*/false).IgnoreError();
      return published;
    }
  }
  step("published");

  // 6. Free the old generation once its readers have had time to move.
  options.sleep(options.grace);
  return FreeGeneration(txns, *old, /*values=*/false);
}

}  // namespace fathom::kv
