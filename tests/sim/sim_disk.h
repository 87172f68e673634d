// SimDisk: the simulated disk of a SimCluster. Every node's data directory lives in memory (RocksDB's
// mock file system), so the SSD log (logging/object_log.h) runs in the simulation as it ships, on the
// node's executor, and a seed can choose its faults:
//   - a disk that fails every write, as a full or broken one does (logging/testing/failing_env.h), until
//     it is healed: the log retries and its epochs stop closing meanwhile;
//   - a machine that loses power: what was written under its directory but not synced is gone.
//
//   SimDisk disk;
//   server_options.data_dir = "/sim/node1";
//   server_options.log_env = disk.env();
//   disk.set_failing(true);                // every write fails from now on
//   disk.LoseUnsyncedUnder("/sim/node1");  // a power loss of node 1
#ifndef FATHOM_TESTS_SIM_SIM_DISK_H_
#define FATHOM_TESTS_SIM_SIM_DISK_H_

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "logging/testing/failing_env.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"

namespace fathom::sim {

class SimDisk {
 public:
  SimDisk();
  ~SimDisk();

  rocksdb::Env* env() { return env_.get(); }
  // Every new file and every append, flush or sync fails (NoSpace) while `failing`.
  void set_failing(bool failing) { full_->set_full(failing); }
  bool failing() const { return full_->full(); }
  int failures() const { return full_->failures(); }
  // A power loss of the machine whose directory is `dir`: every file under it is cut back to what was
  // synced. The process that wrote them must be gone (its open files are not told).
  absl::Status LoseUnsyncedUnder(const std::string& dir);
  // Bytes written under `dir` but not synced yet.
  uint64_t UnsyncedBytesUnder(const std::string& dir) const;

 private:
  class TrackingFileSystem;
  std::shared_ptr<logging::testing::DiskFullFileSystem> full_;
  std::shared_ptr<TrackingFileSystem> tracking_;
  std::unique_ptr<rocksdb::Env> base_;  // the mock file system's
  std::unique_ptr<rocksdb::Env> env_;
};

}  // namespace fathom::sim

#endif  // FATHOM_TESTS_SIM_SIM_DISK_H_
