#include "kv/table_state.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "platform/base/status_macros.h"

namespace fathom::kv {
namespace {

constexpr char kMovedPayload[] = "fathom.kv/table-moved";

// Checks what was read against the descriptor and builds the generation.
absl::StatusOr<std::shared_ptr<TableState>> MakeState(const TableInfo& info, std::string_view root_bytes,
                                                      const std::vector<std::string>& chunks) {
  ASSIGN_OR_RETURN(Root root, DecodeRoot(root_bytes));
  auto state = std::make_shared<TableState>();
  state->name = info.name;
  state->root_ref = info.root;
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
  ASSIGN_OR_RETURN(std::vector<std::string> chunks, tx.ReadMany(root.chunks));
  // A root and its chunks never change after creation, and each read saw its object whole: nothing to
  // validate. Committing did, and failed Aborted when a resize freed the generation right after the reads
  // (kv_workloads_test: Table::Open failed "freed or reused (stale reference)").
  tx.Abort();
  return MakeState(info, root_bytes, chunks);
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
  thread.Read(*tx, info.root, [&thread, tx, info, done](absl::StatusOr<std::string> root_bytes) {
    if (!root_bytes.ok()) {
      thread.Abort(*tx);
      return done(root_bytes.status());
    }
    auto root = DecodeRoot(*root_bytes);
    if (!root.ok()) {
      thread.Abort(*tx);
      return done(root.status());
    }
    thread.ReadMany(tx, root->chunks,
                    [&thread, tx, info, done, root_bytes = std::move(*root_bytes)](
                        absl::StatusOr<std::vector<std::string>> chunks) {
                      thread.Abort(*tx);  // immutable objects: nothing to validate
                      if (!chunks.ok()) return done(chunks.status());
                      done(MakeState(info, root_bytes, *chunks));
                    });
  });
}

std::shared_ptr<const TableState> TableHandle::current() const {
  MutexLock lock(&mu_);
  return state_;
}

void TableHandle::Install(std::shared_ptr<const TableState> state) {
  MutexLock lock(&mu_);
  if (state->epoch() > state_->epoch()) state_ = std::move(state);
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
