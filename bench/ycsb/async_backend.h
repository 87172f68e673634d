// AsyncBackend: a store driven by clients that run on a store's own threads (a Fathom cluster's node
// threads) and keep one operation in flight each, instead of one blocked application thread per client.
// The asynchronous driver (async_runner.h) runs YCSB's core workload on it.
//
// A backend belongs to one lane (AsyncLanes): every call is made on the lane's thread and every callback
// runs there, exactly once, possibly before the call returns. Errors are reported as in backend.h.
#ifndef FATHOM_BENCH_YCSB_ASYNC_BACKEND_H_
#define FATHOM_BENCH_YCSB_ASYNC_BACKEND_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/ycsb/backend.h"

namespace fathom::ycsb {

class AsyncBackend {
 public:
  using Done = std::function<void(absl::Status)>;
  using ReadDone = std::function<void(absl::StatusOr<Record>)>;
  virtual ~AsyncBackend() = default;

  // As Backend's operations. Pointer and reference arguments stay valid until the callback ran.
  virtual void Read(const std::string& table, const std::string& key, const FieldList* fields, ReadDone done) = 0;
  virtual void Update(const std::string& table, const std::string& key, const Record& values, Done done) = 0;
  virtual void Insert(const std::string& table, const std::string& key, const Record& values, Done done) = 0;
  virtual void Delete(const std::string& table, const std::string& key, Done done) = 0;
  virtual void Scan(const std::string& table, const std::string& start_key, int64_t count, const FieldList* fields,
                    Done done) {
    done(absl::UnimplementedError("scan not supported by this backend"));
  }
  virtual void Transfer(const std::string& table, const std::string& from, const std::string& to, int64_t amount,
                        Done done) {
    done(absl::UnimplementedError("transfer not supported by this backend"));
  }
};

// Where asynchronous clients run: `lanes()` threads, each running the tasks posted to it one at a time,
// each with its own AsyncBackend.
class AsyncLanes {
 public:
  virtual ~AsyncLanes() = default;
  virtual int lanes() const = 0;
  // Runs `task` on lane `lane`'s thread; Unavailable if that thread stopped.
  virtual absl::Status Post(int lane, std::function<void()> task) = 0;
  // Lane `lane`'s backend; used only on that lane's thread.
  virtual AsyncBackend& backend(int lane) = 0;
  virtual std::string Describe() const = 0;
  // What the lanes' node is doing (connections, rings, reads in flight), printed when no operation has
  // completed for a while; empty where there is nothing to say.
  virtual std::string StallReport() { return {}; }
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_ASYNC_BACKEND_H_
