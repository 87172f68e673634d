// CoreWorkload: YCSB's site.ycsb.workloads.CoreWorkload — which keys, fields and values each operation
// uses, and the mix of reads, updates, inserts, scans and read-modify-writes — configured by the same
// property names and defaults (WorkloadConfig::FromProperties lists them).
//
// Shared state (the insert key counters) lives in CoreWorkload and is thread-safe; everything random
// lives in a ThreadState, one per client thread, seeded by the driver.
//
//   ASSIGN_OR_RETURN(auto workload, CoreWorkload::Create(props));
//   auto state = workload->NewThreadState(/*seed=*/42);
//   workload->DoInsert(db, *state, &measurements);       // load phase: one record
//   workload->DoTransaction(db, *state, &measurements);  // run phase: one operation
#ifndef FATHOM_BENCH_YCSB_CORE_WORKLOAD_H_
#define FATHOM_BENCH_YCSB_CORE_WORKLOAD_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "bench/ycsb/backend.h"
#include "bench/ycsb/generators.h"
#include "bench/ycsb/measurements.h"
#include "bench/ycsb/properties.h"

namespace fathom::ycsb {

struct WorkloadConfig {
  std::string table = "usertable";                   // table
  int64_t record_count = 0;                           // recordcount (required)
  int64_t operation_count = 0;                        // operationcount (required)
  int64_t insert_start = 0;                           // insertstart
  int64_t insert_count = 0;                           // insertcount (default recordcount - insertstart)
  int64_t field_count = 10;                           // fieldcount
  std::string field_name_prefix = "field";            // fieldnameprefix
  int64_t field_length = 100;                         // fieldlength
  int64_t min_field_length = 1;                       // minfieldlength
  std::string field_length_distribution = "constant";  // fieldlengthdistribution: constant|uniform|zipfian
  bool read_all_fields = true;                        // readallfields
  bool write_all_fields = false;                      // writeallfields
  double read_proportion = 0.95;                      // readproportion
  double update_proportion = 0.05;                    // updateproportion
  double insert_proportion = 0.0;                     // insertproportion
  double scan_proportion = 0.0;                       // scanproportion
  double read_modify_write_proportion = 0.0;          // readmodifywriteproportion
  std::string request_distribution = "uniform";       // requestdistribution: uniform|zipfian|latest|hotspot
  int64_t min_scan_length = 1;                        // minscanlength
  int64_t max_scan_length = 1000;                     // maxscanlength
  std::string scan_length_distribution = "uniform";   // scanlengthdistribution: uniform|zipfian
  bool ordered_inserts = false;                       // insertorder: hashed (false) | ordered
  int zero_padding = 1;                               // zeropadding
  double hotspot_data_fraction = 0.2;                 // hotspotdatafraction
  double hotspot_operation_fraction = 0.8;            // hotspotopnfraction
  int64_t insertion_retry_limit = 0;                  // core_workload_insertion_retry_limit
  int64_t insertion_retry_interval_s = 3;             // core_workload_insertion_retry_interval
  // The transactional bank (ours, not YCSB's): a transfer moves 1..maxtransfer between the "balance" fields
  // of two records chosen by the request distribution, atomically (Backend::Transfer). With
  // transferproportion > 0 every loaded record gets a balance of initialbalance, so the total is known.
  double transfer_proportion = 0.0;                   // transferproportion
  int64_t initial_balance = 1000;                     // initialbalance
  int64_t max_transfer = 10;                          // maxtransfer

  static absl::StatusOr<WorkloadConfig> FromProperties(const Properties& props);
};

// One operation as the workload chose it, before it runs: the synchronous driver runs it at once, the
// asynchronous one (async_runner.h) starts it on a node thread and finishes it in a callback.
struct PlannedOperation {
  Operation op = Operation::kRead;
  std::string key;                    // for a scan, the start key
  std::unique_ptr<FieldList> fields;  // read, scan, read-modify-write: the fields to read (null: all)
  Record values;                      // update, insert, read-modify-write: what to write
  int64_t scan_length = 0;
  int64_t insert_keynum = -1;         // a run-phase insert: acknowledged by Finish
  std::string to_key;                 // transfer: from `key` to `to_key`
  int64_t amount = 0;
};

class CoreWorkload {
 public:
  // One client thread's randomness: its Rng and its own copies of the generators.
  struct ThreadState {
    Rng rng;
    std::unique_ptr<NumberGenerator> key_chooser;
    std::unique_ptr<NumberGenerator> field_chooser;
    std::unique_ptr<NumberGenerator> field_length;
    std::unique_ptr<NumberGenerator> scan_length;
    DiscreteGenerator<Operation> operation_chooser;
  };

  static absl::StatusOr<std::unique_ptr<CoreWorkload>> Create(const Properties& props);
  ~CoreWorkload();

  const WorkloadConfig& config() const { return config_; }

  // REQUIRES: called after the load phase for "latest" (its generator starts from the loaded keys).
  std::unique_ptr<ThreadState> NewThreadState(uint64_t seed);

  // Inserts the next record of the load phase (retrying up to insertion_retry_limit times).
  void DoInsert(Backend& db, ThreadState& state, Measurements* measurements);
  // Runs one operation chosen by the proportions; returns which. `measurements` may be null (warm-up).
  Operation DoTransaction(Backend& db, ThreadState& state, Measurements* measurements);

  // The same choices, for a driver that runs operations itself (the random draws happen in the same order
  // as in DoInsert / DoTransaction). Every planned run-phase operation must be passed to Finish once it
  // completed, successfully or not: a run-phase insert is acknowledged there (YCSB's "latest" window).
  PlannedOperation PlanInsert(ThreadState& state);
  PlannedOperation PlanTransaction(ThreadState& state);
  absl::Status Finish(const PlannedOperation& op);

  // The bank's check: reads the balance of every loaded record through `db` and returns their sum, which
  // must equal ExpectedTotal() once no transfer is running (transfers move money, never make or lose it).
  absl::StatusOr<int64_t> SumBalances(Backend& db) const;
  int64_t ExpectedTotal() const { return config_.insert_count * config_.initial_balance; }

  // After a load (and any runs): reads every loaded record once through `db` and says which could not be
  // read whole (missing, failed, e.g. still locked, or with fewer fields than fieldcount). The fault
  // tests' check that nothing was lost and no key stayed locked.
  struct VerifyReport {
    int64_t records = 0, ok = 0, missing = 0, failed = 0;
    std::map<std::string, int64_t> errors;  // "<key>: <status>" for the first failures, and counts by status
  };
  VerifyReport VerifyRecords(Backend& db) const;

  std::string BuildKeyName(int64_t keynum) const;
  // The next operation type, without running it (exposed for the proportion tests).
  Operation ChooseOperation(ThreadState& state) const;
  // The next key number of a read/update/scan: never one whose insert is still in flight.
  int64_t NextKeynum(ThreadState& state);

 private:
  explicit CoreWorkload(WorkloadConfig config);

  Record BuildValues(ThreadState& state, const std::string& key);
  Record BuildSingleValue(ThreadState& state, const std::string& key);
  std::unique_ptr<FieldList> FieldsToRead(ThreadState& state);

  // Runs a planned run-phase operation on `db`, measured.
  void Execute(Backend& db, const PlannedOperation& op, Measurements* measurements);

  const WorkloadConfig config_;
  CounterGenerator load_key_sequence_;                       // keys of the load phase
  AcknowledgedCounterGenerator transaction_insert_sequence_;  // keys of run-phase inserts
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_CORE_WORKLOAD_H_
