// How much of one node's memory each table takes, for the metrics page (fathom_table_bytes): the objects of
// the table that this node serves as primary. Backups keep as much again on `backups` other nodes.
//
//   TableMemory tables(Clock::Real());
//   ASSIGN_OR_RETURN(auto bytes, tables.Measure(server));   // name -> {index, values}
//
// Index bytes (the buckets, the chunks listing them and the root, slot sizes) are exact: each table
// generation's layout is loaded once. Value bytes are the slots of the out-of-line value objects the
// table's buckets on this node point to (kv allocates a value beside its bucket; values up to the table's
// inline bytes live in the bucket and count as index); counting them copies every bucket this node
// serves, so it is done at most once per `value_scan_interval` and the figure is that old at most.
#ifndef FATHOM_SERVER_TABLE_MEMORY_H_
#define FATHOM_SERVER_TABLE_MEMORY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "platform/base/clock.h"
#include "platform/object/object_layout.h"
#include "server/server.h"

namespace fathom::server {

struct TableBytes {
  uint64_t index = 0;
  uint64_t values = 0;
};

class TableMemory {
 public:
  explicit TableMemory(const Clock* clock, absl::Duration value_scan_interval = absl::Seconds(30))
      : clock_(clock), value_scan_interval_(value_scan_interval) {}

  // Every table in the server's catalog, by name. FailedPrecondition without a catalog or transaction
  // layer; a table whose layout cannot be read (dropped meanwhile) is left out.
  absl::StatusOr<std::map<std::string, TableBytes>> Measure(Server& server);

 private:
  // One table generation's objects, by region.
  struct Layout {
    uint64_t epoch = 0;
    object::ObjectRef root;
    std::map<uint32_t, uint64_t> index_bytes;  // region -> slot bytes of buckets, chunks and root
    std::map<uint32_t, std::vector<object::ObjectRef>> buckets;  // region -> its buckets
    // Per region: the value bytes the last scan found there, and when it ran.
    std::map<uint32_t, uint64_t> value_bytes;
    absl::Time scanned = absl::InfinitePast();
  };
  static absl::StatusOr<Layout> Load(txn::TransactionService& txns, const kv::TableInfo& info);
  // The out-of-line value slots the buckets point to (buckets locked or torn too long count nothing).
  static uint64_t ScanValues(const memory::LocalRegion& region, const std::vector<object::ObjectRef>& buckets);

  const Clock* const clock_;
  const absl::Duration value_scan_interval_;
  absl::Mutex mu_;
  std::map<std::string, Layout> layouts_ ABSL_GUARDED_BY(mu_);  // by table name
};

}  // namespace fathom::server

#endif  // FATHOM_SERVER_TABLE_MEMORY_H_
