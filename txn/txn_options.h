// Options of the transaction layer.
#ifndef FATHOM_TXN_TXN_OPTIONS_H_
#define FATHOM_TXN_TXN_OPTIONS_H_

#include <cstddef>

#include "absl/time/time.h"

namespace fathom::txn {

struct TxnOptions {
  // f: backups per region (f+1 copies in memory). Every region's primary and backups are distinct nodes.
  int backups = 1;
  // How long a coordinator waits for LOCK and allocation replies before it gives up (Unavailable).
  absl::Duration rpc_timeout = absl::Seconds(5);
  // Truncation ids owed to a node go out on their own after this long without a record to ride on...
  absl::Duration truncate_delay = absl::Microseconds(500);
  // ...or as soon as this many are owed.
  size_t truncate_batch = 64;
  // How long a read retries an object that stays locked (or torn) before it gives up with Aborted.
  absl::Duration locked_read_timeout = absl::Milliseconds(100);
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_TXN_OPTIONS_H_
