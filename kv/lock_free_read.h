// One lock-free, self-verifying object read outside any transaction, for GET's hot path (table_async.cc).
//
// A GET that finds its key in the first bucket it reads needs no transaction: one copy checked whole
// (checksum, lock bit, incarnation: object_codec.h) is a consistent snapshot by itself. Going through
// txn::TxnThread::Read instead costs a transaction state, a read-set entry, two std::function wrappers and
// a copy of the bucket into a string per GET. This reads through the same node-thread machinery
// (ObjectStore for local objects, the thread's AsyncObjectReader for remote ones) and hands the checked
// copy to the caller in place, with its version, so a GET that does need a transaction later (a miss that
// reads more buckets) can put this read into its read set.
#ifndef FATHOM_KV_LOCK_FREE_READ_H_
#define FATHOM_KV_LOCK_FREE_READ_H_

#include "platform/object/async_object_reader.h"
#include "platform/object/object_layout.h"
#include "txn/txn_thread.h"

namespace fathom::kv {

enum class LockFreeRead {
  kStarted,  // `done` runs exactly once: already, or later on the thread's loop
  // A local object was locked or torn: `done` will not run. The caller reads it in a transaction instead,
  // whose local read waits for the lock holder (which may need this very thread) with a timeout.
  kLocalBusy,
};

// Reads `ref` on `thread` (its node thread). `done` gets the checked copy (header and payload; the span is
// valid only during the call) or an error: Unavailable for a remote object that stayed locked or torn
// through the reader's retries (a conflict: TxnThread::Read calls it Aborted), NotFound /
// FailedPrecondition for a freed or reused slot. A read that cannot start returns its error instead and
// `done` does not run: Unavailable (the owner is not connected), InvalidArgument (a bad reference).
// `done` is kept without allocating when it captures no more than two pointers (one shared_ptr).
absl::StatusOr<LockFreeRead> ReadLockFree(txn::TxnThread& thread, const object::ObjectRef& ref,
                                          object::VersionedObjectCallback done);

}  // namespace fathom::kv

#endif  // FATHOM_KV_LOCK_FREE_READ_H_
