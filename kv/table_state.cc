#include "kv/table_state.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "platform/base/status_macros.h"

namespace fathom::kv {
namespace {

constexpr char kMovedPayload[] = "fathom.kv/table-moved";

// Reads of a generation's objects in flight at once: a table of 65,536,000 buckets has 128,000 chunks, and a
// node thread's fabric worker takes a few thousand operations at a time.
constexpr size_t kReadsAtOnce = 512;

// Reads `refs` in groups of kReadsAtOnce, one after the other, on the transaction's thread.
absl::StatusOr<std::vector<std::string>> ReadInGroups(txn::Transaction& tx, const std::vector<object::ObjectRef>& refs) {
  std::vector<std::string> out;
  out.reserve(refs.size());
  for (size_t at = 0; at < refs.size(); at += kReadsAtOnce) {
    const std::vector<object::ObjectRef> group(refs.begin() + at,
                                               refs.begin() + std::min(refs.size(), at + kReadsAtOnce));
    ASSIGN_OR_RETURN(std::vector<std::string> bytes, tx.ReadMany(group));
    for (std::string& b : bytes) out.push_back(std::move(b));
  }
  return out;
}

// The same on a node thread: group by group, then `done` with everything read (or the first error).
void ReadInGroupsAsync(txn::TxnThread& thread, std::shared_ptr<txn::TxState> tx,
                       std::shared_ptr<const std::vector<object::ObjectRef>> refs,
                       std::shared_ptr<std::vector<std::string>> out,
                       std::function<void(absl::StatusOr<std::vector<std::string>>)> done) {
  const size_t at = out->size();
  if (at == refs->size()) return done(std::move(*out));
  const std::vector<object::ObjectRef> group(refs->begin() + at,
                                             refs->begin() + std::min(refs->size(), at + kReadsAtOnce));
  thread.ReadMany(tx, group, [&thread, tx, refs, out, done](absl::StatusOr<std::vector<std::string>> bytes) {
    if (!bytes.ok()) return done(bytes.status());
    for (std::string& b : *bytes) out->push_back(std::move(b));
    ReadInGroupsAsync(thread, tx, refs, out, done);
  });
}

// The chunks' references: the root's own, or those its directories (read as `directories`) hold.
absl::StatusOr<std::vector<object::ObjectRef>> ChunkRefs(const Root& root, const std::vector<std::string>& directories) {
  if (root.directory_levels == 0) return root.chunks;
  std::vector<object::ObjectRef> refs;
  for (const std::string& directory : directories) {
    ASSIGN_OR_RETURN(std::vector<object::ObjectRef> part, DecodeRefs(directory));
    refs.insert(refs.end(), part.begin(), part.end());
  }
  if (refs.size() != root.chunk_count()) {
    return absl::DataLossError(absl::StrCat("kv root says ", root.chunk_count(), " chunks, its directories hold ",
                                            refs.size()));
  }
  return refs;
}

// Checks what was read against the descriptor and builds the generation.
absl::StatusOr<std::shared_ptr<TableState>> MakeState(const TableInfo& info, Root root,
                                                      std::vector<object::ObjectRef> chunk_refs,
                                                      const std::vector<std::string>& chunks) {
  auto state = std::make_shared<TableState>();
  state->name = info.name;
  state->root_ref = info.root;
  state->chunk_refs = std::move(chunk_refs);
  state->bucket_refs.reserve(root.buckets);
  for (const std::string& chunk : chunks) {
    ASSIGN_OR_RETURN(std::vector<object::ObjectRef> refs, DecodeRefs(chunk));
    state->bucket_refs.insert(state->bucket_refs.end(), refs.begin(), refs.end());
  }
  if (state->bucket_refs.size() != root.buckets) {
    return absl::DataLossError(absl::StrCat("kv table ", info.name, ": root says ", root.buckets,
                                            " buckets, chunks hold ", state->bucket_refs.size()));
  }
  if (root.kind != info.kind) {
    return absl::DataLossError(absl::StrCat("kv table ", info.name, ": the catalog says index kind ",
                                            static_cast<int>(info.kind), ", its root ", static_cast<int>(root.kind)));
  }
  if (root.epoch != info.epoch) {
    return absl::DataLossError(
        absl::StrCat("kv table ", info.name, ": the catalog says epoch ", info.epoch, ", its root ", root.epoch));
  }
  ASSIGN_OR_RETURN(state->index, MakeIndex(root.kind, root.buckets));
  state->root = std::move(root);
  return state;
}

}  // namespace

absl::Status TableMovedError(std::string_view why) {
  absl::Status s = absl::AbortedError(absl::StrCat("kv table moved: ", std::string(why)));
  s.SetPayload(kMovedPayload, absl::Cord("1"));
  return s;
}

bool IsTableMoved(const absl::Status& status) { return status.GetPayload(kMovedPayload).has_value(); }

absl::StatusOr<std::shared_ptr<TableState>> LoadState(txn::TransactionService& txns, const TableInfo& info) {
  txn::Transaction tx = txns.Begin();
  ASSIGN_OR_RETURN(std::string root_bytes, tx.Read(info.root));
  ASSIGN_OR_RETURN(Root root, DecodeRoot(root_bytes));
  std::vector<std::string> directories;
  if (root.directory_levels > 0) {
    ASSIGN_OR_RETURN(directories, ReadInGroups(tx, root.chunks));
  }
  ASSIGN_OR_RETURN(std::vector<object::ObjectRef> chunk_refs, ChunkRefs(root, directories));
  ASSIGN_OR_RETURN(std::vector<std::string> chunks, ReadInGroups(tx, chunk_refs));
  // A root and its chunks never change after creation, and each read saw its object whole: nothing to
  // validate. Committing did, and failed Aborted when a resize freed the generation right after the reads
  // (kv_workloads_test: Table::Open failed "freed or reused (stale reference)").
  tx.Abort();
  return MakeState(info, std::move(root), std::move(chunk_refs), chunks);
}

absl::StatusOr<std::shared_ptr<TableState>> LoadCurrentState(txn::TransactionService& txns, Catalog& catalog,
                                                             TableInfo found) {
  while (true) {
    absl::StatusOr<std::shared_ptr<TableState>> state = LoadState(txns, found);
    // NotFound: freed before its read; Aborted: being freed (locked) as it was read.
    if (state.ok() || !(absl::IsNotFound(state.status()) || absl::IsAborted(state.status()))) return state;
    // Each pass needs a newer generation published meanwhile: resizes are finite, so this ends.
    ASSIGN_OR_RETURN(TableInfo now, catalog.Find(found.name));
    if (now.SameGeneration(found)) return state;
    found = std::move(now);
  }
}

void LoadStateAsync(txn::TxnThread& thread, const TableInfo& info,
                    std::function<void(absl::StatusOr<std::shared_ptr<TableState>>)> done) {
  std::shared_ptr<txn::TxState> tx = thread.Begin();
  // Immutable objects: nothing to validate, so every path ends the transaction with an abort.
  auto finish = [&thread, tx, done](absl::StatusOr<std::shared_ptr<TableState>> state) {
    thread.Abort(*tx);
    done(std::move(state));
  };
  // Reads the chunks once their references are known.
  auto read_chunks = [&thread, tx, info, finish](Root root, std::vector<object::ObjectRef> chunk_refs) {
    auto refs = std::make_shared<const std::vector<object::ObjectRef>>(std::move(chunk_refs));
    ReadInGroupsAsync(thread, tx, refs, std::make_shared<std::vector<std::string>>(),
                      [info, finish, root = std::move(root), refs](absl::StatusOr<std::vector<std::string>> chunks) {
                        if (!chunks.ok()) return finish(chunks.status());
                        finish(MakeState(info, root, *refs, *chunks));
                      });
  };
  thread.Read(*tx, info.root, [&thread, tx, finish, read_chunks](absl::StatusOr<std::string> root_bytes) {
    if (!root_bytes.ok()) return finish(root_bytes.status());
    absl::StatusOr<Root> root = DecodeRoot(*root_bytes);
    if (!root.ok()) return finish(root.status());
    if (root->directory_levels == 0) return read_chunks(*root, root->chunks);
    ReadInGroupsAsync(thread, tx, std::make_shared<const std::vector<object::ObjectRef>>(root->chunks),
                      std::make_shared<std::vector<std::string>>(),
                      [finish, read_chunks, root = *root](absl::StatusOr<std::vector<std::string>> directories) {
                        if (!directories.ok()) return finish(directories.status());
                        absl::StatusOr<std::vector<object::ObjectRef>> chunk_refs = ChunkRefs(root, *directories);
                        if (!chunk_refs.ok()) return finish(chunk_refs.status());
                        read_chunks(root, std::move(*chunk_refs));
                      });
  });
}

std::shared_ptr<const TableState> TableHandle::current() const {
  MutexLock lock(&mu_);
  return state_;
}

void TableHandle::Install(std::shared_ptr<const TableState> state) {
  MutexLock lock(&mu_);
  if (state->epoch() <= state_->epoch()) return;
  state_ = std::move(state);
  installs_.fetch_add(1, std::memory_order_release);
}

absl::StatusOr<bool> TableHandle::Refresh(uint64_t seen) {
  if (current()->epoch() > seen) return true;  // another thread already refetched
  ASSIGN_OR_RETURN(TableInfo info, catalog_->Find(name_));
  if (info.epoch <= seen) return false;
  ASSIGN_OR_RETURN(std::shared_ptr<TableState> state, LoadCurrentState(*txns_, *catalog_, std::move(info)));
  Install(std::move(state));
  return true;
}

void TableHandle::RefreshAsync(txn::TxnThread& thread, uint64_t seen, std::function<void(absl::StatusOr<bool>)> done) {
  if (current()->epoch() > seen) return done(true);
  // The catalog answers from this node's copy of the configuration (or a local map): no waiting here.
  absl::StatusOr<TableInfo> info = catalog_->Find(name_);
  if (!info.ok()) return done(info.status());
  if (info->epoch <= seen) return done(false);
  LoadStateAsync(thread, *info,
                 [self = shared_from_this(), &thread, seen, found = *info,
                  done](absl::StatusOr<std::shared_ptr<TableState>> state) {
                   if (!state.ok()) {
                     // The generation found was freed by a newer resize before its root was read: refetch.
                     if (absl::IsNotFound(state.status()) || absl::IsAborted(state.status())) {
                       absl::StatusOr<TableInfo> now = self->catalog_->Find(self->name_);
                       if (now.ok() && !now->SameGeneration(found)) return self->RefreshAsync(thread, seen, done);
                     }
                     return done(state.status());
                   }
                   self->Install(std::move(*state));
                   done(true);
                 });
}

}  // namespace fathom::kv
