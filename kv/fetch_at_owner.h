// Fetch at the owner: a transaction's operation on a key (kv::Table's GetAsync/PutAsync/DeleteAsync in a
// caller's transaction, and PUT/DELETE in one of their own) over a fabric whose reads the owner's CPU
// serves anyway (tcp, fabric.h ReadsServedByPeer) asks the node serving the key's home bucket, in one
// fabric call, for checked copies of that bucket and of the key's out-of-line value object, each with
// its version, and adds them to the transaction's read set as if it had read them (TxnThread::AddRead).
// The operation then finds both there: one round trip where reading the bucket and then the value object
// takes two. The commit checks their versions as for any read.
//
// Not asked (the bucket is this node's, or already read by the transaction, or the endpoint reads
// one-sided), not answered, or answered "not served": the operation reads as it would have. The answer's
// format: docs/formats/kv.md, "Fetch at the owner".
#ifndef FATHOM_KV_FETCH_AT_OWNER_H_
#define FATHOM_KV_FETCH_AT_OWNER_H_

#include <functional>
#include <memory>
#include <string>

#include "kv/table_state.h"
#include "txn/txn.h"

namespace fathom::kv {

// Runs `then` once, on the thread, when the read set holds what the owner answered (or nothing came).
void FetchAtOwner(txn::TxnThread& thread, const std::shared_ptr<txn::TxState>& tx, const TableState& table,
                  const std::string& key, std::function<void()> then);

}  // namespace fathom::kv

#endif  // FATHOM_KV_FETCH_AT_OWNER_H_
